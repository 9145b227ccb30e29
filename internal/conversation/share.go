package conversation

import (
	"reflect"
	"slices"
	"sync"

	"github.com/agentloop/agentloop/settings"
)

// lastShared keeps the last value of one part of a session that sessions
// built alike compute the same (the sandbox settings, the configuration
// paths), so that many idle sessions of one process keep one copy rather
// than one each. share returns the kept value when it equals *v, else
// keeps a copy of *v and returns it.
//
// Ownership: what the kept value points to (v's slices, maps) is shared
// by every session that got it and must never be changed; sessions only
// read it. Safe for concurrent
// use. It holds one value, so sessions built differently cost a
// comparison more than before, and nothing is kept that a live session
// does not hold as well (besides the last one).
type lastShared[T any] struct {
	mu    sync.Mutex
	last  *T
	equal func(a, b *T) bool
}

func (l *lastShared[T]) share(v *T) *T {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last != nil && l.equal(l.last, v) {
		return l.last
	}
	c := *v
	l.last = &c
	return &c
}

// sharedSandbox holds the last sandbox settings a session read.
var sharedSandbox = lastShared[settings.Sandbox]{equal: func(a, b *settings.Sandbox) bool {
	return reflect.DeepEqual(a, b)
}}

// sharedConfigPaths holds the last configuration paths (configPaths).
var sharedConfigPaths = lastShared[[]string]{equal: func(a, b *[]string) bool {
	return slices.Equal(*a, *b)
}}
