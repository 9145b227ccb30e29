package agentloop

import "time"

// SetCloseTimeout shortens how long Client.Close waits, for a test; it
// returns a function that restores the bound.
func SetCloseTimeout(d time.Duration) (restore func()) {
	old := closeTimeout
	closeTimeout = d
	return func() { closeTimeout = old }
}
