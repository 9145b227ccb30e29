package lazy

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestGetBuildsOnce: concurrent first calls build the value once and all
// see it; later calls do not build again.
func TestGetBuildsOnce(t *testing.T) {
	var v Value[[]int]
	var builds atomic.Int32
	build := func() []int { builds.Add(1); return []int{1, 2, 3} }
	var wg sync.WaitGroup
	got := make([][]int, 8)
	for i := range got {
		wg.Go(func() { got[i] = v.Get(build) })
	}
	wg.Wait()
	for i, g := range got {
		if len(g) != 3 || &g[0] != &got[0][0] {
			t.Errorf("caller %d got %v, not the one value built", i, g)
		}
	}
	v.Get(build)
	if n := builds.Load(); n != 1 {
		t.Errorf("built %d times, want once", n)
	}
}

// TestGetPanic: a panic in build reaches the first caller; the value stays
// the zero value and is not built again.
func TestGetPanic(t *testing.T) {
	var v Value[int]
	func() {
		defer func() {
			if recover() == nil {
				t.Error("build's panic did not reach Get's caller")
			}
		}()
		v.Get(func() int { panic("boom") })
	}()
	if got := v.Get(func() int { return 7 }); got != 0 {
		t.Errorf("after a panicking build Get = %d, want 0", got)
	}
}
