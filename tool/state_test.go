package tool_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop/tool"
)

type stateKeyA struct{}
type stateKeyB struct{}

// TestStateLoad: a key's value is made once and kept; keys are apart;
// goroutines loading the same key at once all get the one value kept.
func TestStateLoad(t *testing.T) {
	var st tool.State
	var made atomic.Int32
	mk := func() any { made.Add(1); return new(int) }
	a := st.Load(stateKeyA{}, mk)
	if again := st.Load(stateKeyA{}, mk); again != a {
		t.Fatal("a second Load of the key returned another value")
	}
	b := st.Load(stateKeyB{}, mk)
	if b == a {
		t.Fatal("two keys share a value")
	}
	if made.Load() != 2 {
		t.Fatalf("made %d values for two keys, want 2", made.Load())
	}

	var st2 tool.State
	const n = 16
	got := make([]any, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			key := any(stateKeyA{})
			if i%2 == 1 {
				key = stateKeyB{}
			}
			got[i] = st2.Load(key, func() any { return new(int) })
		})
	}
	wg.Wait()
	for i := 2; i < n; i++ {
		if got[i] != got[i%2] {
			t.Fatalf("goroutine %d got another value for its key than goroutine %d", i, i%2)
		}
	}
	if got[0] == got[1] {
		t.Fatal("two keys share a value")
	}
}

// TestStateIsSmall: what a session's State keeps with a few keys (an
// idle session has two) is bounded, and reading a key that is there
// allocates nothing (a tool's lookup on each call).
func TestStateIsSmall(t *testing.T) {
	const n = 2000
	states := make([]*tool.State, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range states {
		st := new(tool.State)
		st.Load(stateKeyA{}, func() any { return nil })
		st.Load(stateKeyB{}, func() any { return nil })
		states[i] = st
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	// A sync.Map kept 285 bytes for two keys.
	if per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n; per > 160 {
		t.Errorf("a State with two keys keeps %d bytes, want at most 160", per)
	}
	runtime.KeepAlive(states)

	var st tool.State
	st.Load(stateKeyA{}, func() any { return 1 })
	if n := testing.AllocsPerRun(100, func() {
		st.Load(stateKeyA{}, func() any { return 2 })
	}); n != 0 {
		t.Errorf("loading a present key allocates %v times, want 0", n)
	}
}
