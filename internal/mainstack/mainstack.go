// Package mainstack grows the main goroutine's stack once, early, so that
// it is not grown again under the deep calls of the start-up.
//
// A goroutine starts with a 2 KiB stack and doubles it when a call would
// overflow it. Each growth copies the stack, and the copy walks every frame
// on it, reading the unwinding tables of each function (the binary's
// .gopclntab section). When the growth comes deep inside a package's
// initialiser or the command's first turn, the walk reads the tables of
// dozens of functions spread over the binary, and the kernel maps 64 KiB of
// the file around each read: about 1 MiB of resident memory in the
// agentloop command, and a millisecond of CPU, for tables it never reads
// again.
//
// Importing this package (blank, from a main package) runs one function
// with a 12 KiB frame from an initialiser that runs before nearly all
// others. Go initialises, at each step, the first package by import path
// whose imports are done; this one imports nothing, so only packages that
// also import nothing (or only such packages) and sort before
// "github.com" come first, and those initialise a few variables at most.
// The main goroutine then grows to 16 KiB once, with three frames to walk,
// which is as deep as the command's start-up and a one-turn run go. A
// collection may later shrink the stack again if it is mostly unused;
// nothing else changes.
//
// Only commands should import it: in a library it would cost every program
// that links the library 16 KiB of stack on its main goroutine.
package mainstack

// frame is the size of reserve's frame: 12 KiB, which with what is already
// on the stack needs 16 KiB.
const frame = 12 << 10

func init() { reserve() }

// reserve holds a frame-sized array that the compiler cannot drop (its
// address goes to keep), so that its call grows the stack.
//
//go:noinline
func reserve() {
	var buf [frame]byte
	keep(&buf)
}

// keep is not inlined, so that buf must exist in reserve's frame.
//
//go:noinline
func keep(b *[frame]byte) { b[0] = 1 }
