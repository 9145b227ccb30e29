//go:build !linux

package permission

import "errors"

// confineWrites is only implemented on Linux (Landlock).
func confineWrites(writable ...string) error {
	return errors.New("write confinement needs Linux Landlock")
}
