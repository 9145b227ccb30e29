import { suite } from '../lib/suite.mjs';

suite('adapter', {
  // Behind the adapter, the prompt after a cancelled one ends with the
  // interrupted turn's late result: agentloop echoes a user message
  // (--replay-user-messages) when it accepts it, while the adapter takes
  // the echo to mean the message's turn has begun, so the result that
  // follows is taken for the new prompt's.
  cancel: 'the prompt after a cancel gets the interrupted turn\'s result (replay timing, open)',
});
