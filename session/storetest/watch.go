package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentloop/agentloop/session"
)

// testWatch checks a Watcher: an append through another instance wakes a
// watch of the key (not one of another key), LoadFrom reads the tail
// only, and ending the watch's context closes its channel. Stores that
// are not Watchers skip it.
func testWatch(t *testing.T, a, b session.Store) {
	wa, ok := a.(session.Watcher)
	if !ok {
		t.Skip("not a session.Watcher")
	}
	k, other := key("watch-"+sid[:8]), key("watch-other")
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, err := wa.Watch(wctx, k)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	oc, err := wa.Watch(wctx, other)
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	for i := range 3 {
		if err := b.Append(ctx, k, []session.Entry{entryN("w", i, fmt.Sprint("entry ", i))}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c:
		case <-time.After(5 * time.Second):
			t.Fatalf("append %d through the other instance did not wake the watch", i)
		}
	}
	select {
	case <-oc:
		t.Error("the watch of another key woke")
	case <-time.After(100 * time.Millisecond):
	}
	tail, err := wa.LoadFrom(ctx, k, 1)
	if err != nil || len(tail) != 2 || textOf(tail[0]) != "entry 1" || textOf(tail[1]) != "entry 2" {
		t.Errorf("LoadFrom(1) = %d entries (%v), want entries 1 and 2", len(tail), err)
	}
	if rest, err := wa.LoadFrom(ctx, k, 3); err != nil || len(rest) != 0 {
		t.Errorf("LoadFrom past the end = %d entries (%v), want none", len(rest), err)
	}
	cancel()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case _, open := <-c:
			if !open {
				return
			}
		case <-deadline:
			t.Fatal("the watch's channel stayed open after its context ended")
		}
	}
}
