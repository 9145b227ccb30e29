package agentloop

import "time"

// SetMirrorCloseTimeoutForTest shortens the bound on the final flush to
// Options.SessionStore until restore is called.
func SetMirrorCloseTimeoutForTest(d time.Duration) (restore func()) {
	old := mirrorCloseTimeout
	mirrorCloseTimeout = d
	return func() { mirrorCloseTimeout = old }
}
