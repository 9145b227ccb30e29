package conversation

import (
	"reflect"
	"sync"
	"weak"
)

// configMemo is the resolved options of the latest session that kept
// them, held weakly: sessions made one after another with the same
// options (the usual case of many Clients in one process) share one
// copy, and the memo keeps nothing alive once those sessions are gone.
var configMemo struct {
	sync.Mutex
	last weak.Pointer[Config]
}

// shareConfig returns the Config a session keeps for c, its resolved
// options: the memo's when that one is the same as c (sameConfig),
// otherwise c, which becomes the memo's. Neither is written to after
// this: a session's options are read-only once it is set up.
func shareConfig(c *Config) *Config {
	m := &configMemo
	m.Lock()
	defer m.Unlock()
	if p := m.last.Value(); p != nil && sameConfig(p, c) {
		return p
	}
	m.last = weak.Make(c)
	return c
}

// sameConfig reports whether a session could read a where it reads b and
// not tell the difference: every field is equal, where a reference
// (slice, map, pointer, channel) is equal when it is the same reference
// (the same array and length for a slice), not when its contents are.
// A function is equal only when both are nil, and an interface when its
// dynamic values are comparable and equal.
func sameConfig(a, b *Config) bool {
	return sameValue(reflect.ValueOf(a).Elem(), reflect.ValueOf(b).Elem())
}

func sameValue(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		return a.IsNil() == b.IsNil() && a.Len() == b.Len() && a.UnsafePointer() == b.UnsafePointer()
	case reflect.Map, reflect.Pointer, reflect.Chan, reflect.UnsafePointer:
		return a.UnsafePointer() == b.UnsafePointer()
	case reflect.Func:
		return a.IsNil() && b.IsNil()
	case reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() && b.IsNil()
		}
		ea, eb := a.Elem(), b.Elem()
		return ea.Type() == eb.Type() && ea.Comparable() && eb.Comparable() && ea.Equal(eb)
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.Complex64, reflect.Complex128:
		return a.Complex() == b.Complex()
	case reflect.String:
		return a.String() == b.String()
	default:
		return false
	}
}
