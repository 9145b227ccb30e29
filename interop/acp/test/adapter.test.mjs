import { suite } from '../lib/suite.mjs';

// Every check runs behind the adapter as it does natively. The cancel
// check needs adapter ≥ 0.24 (published as @agentclientprotocol/claude-agent-acp):
// 0.23.1 returned the cancelled prompt on the interrupted turn's result and
// left that turn's session_state_changed idle for the next prompt, which then
// ended at once. The reference CLI writes the same lines agentloop does
// (cmd/agentloop/testdata/interrupts/state and stateperm), so 0.23.1 failed that
// way against the reference too.
suite('adapter');
