//go:build !linux

package procguard

// ProtectProcess does nothing on this platform.
func ProtectProcess() {}

// Protected reports false: nothing protects this process here.
func Protected() bool { return false }

// DropThreadCaps does nothing on this platform.
func DropThreadCaps() error { return nil }

func run(fn func() error) error { return fn() }
