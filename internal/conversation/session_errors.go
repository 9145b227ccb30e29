package conversation

import sessions "github.com/agentloop/agentloop/session"

// ErrSessionBusy reports a session to resume or continue whose transcript
// another writer holds (another process, or another Query or Client in
// this one, working on the same session). The Query fails at once rather
// than interleave two conversations in one transcript; resume with
// Options.ForkSession to continue in a new session, or try again once the
// other has ended. It is [session.ErrSessionBusy].
var ErrSessionBusy = sessions.ErrSessionBusy
