package agentloop

import "time"

// SetMirrorCloseTimeoutForTest shortens the bound on the final flush to
// Options.SessionStore until restore is called.
func SetMirrorCloseTimeoutForTest(d time.Duration) (restore func()) {
	old := mirrorCloseTimeout
	mirrorCloseTimeout = d
	return func() { mirrorCloseTimeout = old }
}

// SetLeaseTTLForTest shortens how long a session's claim in
// Options.SessionStore holds until restore is called.
func SetLeaseTTLForTest(d time.Duration) (restore func()) {
	old := leaseTTL
	leaseTTL = d
	return func() { leaseTTL = old }
}
