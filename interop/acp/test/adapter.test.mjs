import { suite } from '../lib/suite.mjs';

suite('adapter', {
  // Behind the adapter, the prompt after a cancelled one answers
  // end_turn at once with no reply, and no request reaches the API; the
  // cause (agentloop's interrupt as the SDK sees it, or the adapter) is
  // not found yet.
  cancel: 'the prompt after a cancel ends at once without reaching the API (open)',
});
