// Package lazy holds package-level values that are built at their first
// use rather than when the process starts.
//
// A package-level variable whose initialiser runs code (a map literal, a
// compiled regular expression, a call such as sync.OnceValue) is built by
// every process that links its package, before main runs, and pages in the
// code and data that building touches, though most runs never read it. A
// zero [Value] is ready as it is: the compiler lays it out as zeroed data,
// so it costs nothing until its first Get.
package lazy

import "sync"

// Value is a value of type T built at its first Get. The zero Value is
// ready for use; a Value must not be copied after its first Get.
type Value[T any] struct {
	once sync.Once
	v    T
}

// Get returns the value, which build makes at the first call: once, even
// when several goroutines call Get at the same time, all of which return
// that value. Later calls do not call build. Every Get of one Value should
// pass the same function. Should build panic, the panic goes to the first
// caller and the value stays T's zero value.
func (l *Value[T]) Get(build func() T) T {
	l.once.Do(func() { l.v = build() })
	return l.v
}
