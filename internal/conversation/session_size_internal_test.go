package conversation

import (
	"testing"
	"unsafe"
)

// TestSessionSizeClass: every idle Client keeps a Session, and 512 bytes
// is the largest size class the allocator serves without its 8-byte
// header; one byte more costs each Client 64 (the 576 class). A field
// that must be added goes into a struct made at first use (runState,
// pendingEngine) or replaces one.
func TestSessionSizeClass(t *testing.T) {
	if n := unsafe.Sizeof(Session{}); n > 512 {
		t.Errorf("a Session is %d bytes, want at most 512", n)
	}
}
