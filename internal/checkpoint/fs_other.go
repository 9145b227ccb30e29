//go:build !unix

package checkpoint

import (
	"errors"
	"io/fs"
)

// errNoSupport: without openat and O_NOFOLLOW the store cannot promise
// that no link is followed, so it saves and restores nothing.
var errNoSupport = errors.New("file checkpoints need a Unix system")

func readState(string) (current, error) { return current{}, errNoSupport }

func restore(string, bool, []byte, fs.FileMode) error { return errNoSupport }

// Supported reports whether the store works on this system: not here,
// for want of openat and O_NOFOLLOW.
const Supported = false
