package transcript

import "sync/atomic"

// writeFault, when set, makes every local transcript write fail with the
// error it returns (nil lets the write through). Tests use it, through
// SetWriteFaultForTest, to lose writes deterministically where a full
// file system cannot be made.
var writeFault atomic.Pointer[func() error]

// SetWriteFaultForTest makes the local writes of every Recorder call f
// first and fail with its non-nil error, until restore is called. For
// tests only.
func SetWriteFaultForTest(f func() error) (restore func()) {
	old := writeFault.Swap(&f)
	return func() { writeFault.Store(old) }
}

// fault returns the injected write error, if any.
func fault() error {
	if f := writeFault.Load(); f != nil && *f != nil {
		return (*f)()
	}
	return nil
}
