import { suite } from '../lib/suite.mjs';

suite('adapter', {
  // Behind the adapter, the prompt after a cancelled one ends at once:
  // the cancelled prompt returns on the interrupted turn's result, and
  // the session_state_changed idle line that follows it is read by the
  // next prompt, which the adapter ends on idle. Whether the reference
  // orders these lines otherwise is not recorded yet.
  cancel: 'the next prompt reads the interrupted turn\'s idle and ends at once (open)',
});
