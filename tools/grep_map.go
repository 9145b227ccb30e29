package tools

import (
	"errors"
	"runtime/debug"
)

// errGrepFault is returned by grepGuardFault when a mapped file could not
// be read, as when it shrank while being searched.
var errGrepFault = errors.New("the file changed while it was searched (memory fault reading it)")

// grepGuardFault runs fn, which reads a mapped file, turning a memory fault
// into errGrepFault: reading a page of a mapping past the end of a file
// that was truncated meanwhile raises SIGBUS, which would otherwise end the
// process. Other panics go on.
func grepGuardFault(fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(interface{ Addr() uintptr }); !ok {
				panic(r)
			}
			err = errGrepFault
		}
	}()
	return fn()
}
