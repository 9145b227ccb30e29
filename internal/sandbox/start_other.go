//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
)

// Available reports the Landlock ABI version of the running kernel. On
// this platform there is none: the error wraps ErrUnavailable.
func Available() (abi int, err error) {
	return 0, fmt.Errorf("%w: Landlock is Linux only, this is %s", ErrUnavailable, runtime.GOOS)
}

// Start starts cmd confined by p; on this platform it cannot, and returns
// an error wrapping ErrUnavailable without starting anything.
func Start(cmd *exec.Cmd, p *Policy) error {
	if err := p.validate(); err != nil {
		return err
	}
	_, err := Available()
	return err
}

// MetadataProtected reports whether sandboxed commands are kept from
// changing metadata outside their writable roots. On this platform there
// is no sandbox: the error wraps ErrNoMetadataProtection.
func MetadataProtected() (bool, error) {
	_, err := Available()
	return false, fmt.Errorf("%w: %w", ErrNoMetadataProtection, err)
}

// ProtectsMissingPaths reports whether Policy.Protect paths that do not
// exist when a command starts are enforced. On this platform there is no
// sandbox: the error wraps ErrNoMetadataProtection.
func ProtectsMissingPaths() (bool, error) {
	return MetadataProtected()
}
