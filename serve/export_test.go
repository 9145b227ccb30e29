package serve

// SetAfterSend makes send call f between Send and the events it numbers,
// until the test ends (restore is registered by the caller).
func SetAfterSend(f func()) (restore func()) {
	old := afterSend
	afterSend = f
	return func() { afterSend = old }
}
