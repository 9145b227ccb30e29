package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
	"github.com/google/go-cmp/cmp"
)

// The harder part of the contract: cancellation, several instances on one
// backend, races, and sizes.
//
// Delete racing Append: each Append and each Delete takes effect at once,
// as a whole, at some point between its call and its return. So while one
// writer appends batches in order and another deletes the transcript, the
// transcript ends up either gone (nil) or holding a suffix of the batches
// the writer appended, each batch whole and in order: those appended after
// the last delete took effect. An Append that returned an error may or may
// not have taken effect, but never in part.

// prompt is how long a call with a cancelled context may take to fail.
const prompt = 2 * time.Second

func entryN(tag string, i int, text string) session.Entry {
	return session.Entry{Type: session.TypeUser, UUID: fmt.Sprintf("%s-%04x-0000-0000-%012d", tag, i>>16&0xffff, i&0xffff),
		SessionID: sid, Message: &session.Message{Role: "user", Content: []model.Content{model.TextBlock(text)}, StringContent: true}}
}

func textOf(e session.Entry) string {
	if e.Message == nil || len(e.Message.Content) == 0 {
		return ""
	}
	return e.Message.Content[0].Text
}

// testCanceled: every method given a cancelled context fails at once with
// an error wrapping context.Canceled, and changes nothing.
func testCanceled(t *testing.T, s session.Store) {
	seed := []session.Entry{textEntry(1), textEntry(2)}
	mustAppend(t, s, key(sid), seed)
	c, cancel := context.WithCancel(ctx)
	cancel()
	sub := key(sid)
	sub.Subpath = "subagents/agent-a1"
	calls := []struct {
		name string
		call func() error
	}{
		{"Append", func() error { return s.Append(c, key(sid), []session.Entry{textEntry(3)}) }},
		{"Append to a new key", func() error { return s.Append(c, sub, []session.Entry{textEntry(4)}) }},
		{"Load", func() error { _, err := s.Load(c, key(sid)); return err }},
		{"List", func() error { _, err := s.List(c, key(sid).ProjectKey); return err }},
		{"Delete", func() error { return s.Delete(c, key(sid)) }},
		{"ListSubkeys", func() error { _, err := s.ListSubkeys(c, key(sid).ProjectKey, sid); return err }},
	}
	for _, tc := range calls {
		start := time.Now()
		err := tc.call()
		if d := time.Since(start); d > prompt {
			t.Errorf("%s with a cancelled context took %v", tc.name, d)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want an error wrapping context.Canceled", tc.name, err)
		}
	}
	if diff := cmp.Diff(seed, mustLoad(t, s, key(sid)), Equal); diff != "" {
		t.Errorf("after calls with a cancelled context (-before +after):\n%s", diff)
	}
	if got := mustLoad(t, s, sub); got != nil {
		t.Errorf("an Append with a cancelled context created a transcript: %d entries", len(got))
	}
	if subs, err := s.ListSubkeys(ctx, key(sid).ProjectKey, sid); err != nil || len(subs) != 0 {
		t.Errorf("ListSubkeys after a cancelled Append = %v, %v; want none", subs, err)
	}
}

// testCanceledMidAppend: an Append whose context is cancelled while it
// runs either stores its whole batch or nothing, and retrying it stores
// the batch once.
func testCanceledMidAppend(t *testing.T, s session.Store) {
	var batch []session.Entry
	for i := range 2000 {
		batch = append(batch, entryN("abababab", i, fmt.Sprint("entry ", i)))
	}
	for i, delay := range []time.Duration{0, 50 * time.Microsecond, 500 * time.Microsecond, 2 * time.Millisecond, 10 * time.Millisecond} {
		k := key(fmt.Sprintf("%08d-2d7f-4f8e-9b7a-1f2e3d4c5b6a", i))
		c, cancel := context.WithCancel(ctx)
		timer := time.AfterFunc(delay, cancel)
		err := s.Append(c, k, batch)
		timer.Stop()
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("Append cancelled after %v = %v, want nil or an error wrapping context.Canceled", delay, err)
		}
		got := mustLoad(t, s, k)
		if n := len(got); n != 0 && n != len(batch) || err == nil && n != len(batch) {
			t.Errorf("Append cancelled after %v (err %v) stored %d of %d entries: want all or, after an error, none",
				delay, err, n, len(batch))
		}
		mustAppend(t, s, k, batch) // the retry
		if got := mustLoad(t, s, k); len(got) != len(batch) {
			t.Errorf("after retrying the batch cancelled after %v: %d entries, want %d", delay, len(got), len(batch))
		}
	}
}

// testOverlapping: two writers (on a and b) append at once, each its own
// entries and, in every batch, an entry both append (a retried batch
// racing the original): every uuid is stored once, nothing is lost, and
// each writer's order holds.
func testOverlapping(t *testing.T, a, b session.Store) {
	const n = 40
	batch := func(w, i int) []session.Entry {
		return []session.Entry{entryN(fmt.Sprintf("%08d", w+1), i, fmt.Sprintf("w%d %d", w, i)), entryN("ffffffff", i, fmt.Sprint("shared ", i))}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for w, s := range []session.Store{a, b} {
		wg.Go(func() {
			for i := range n {
				if err := s.Append(ctx, key(sid), batch(w, i)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, s := range []session.Store{a, b} {
		got := mustLoad(t, s, key(sid))
		if len(got) != 3*n {
			t.Errorf("%d entries after overlapping appends, want %d", len(got), 3*n)
		}
		seen := map[string]bool{}
		next := map[string]int{}
		for _, e := range got {
			if seen[e.UUID] {
				t.Errorf("uuid %s stored twice", e.UUID)
			}
			seen[e.UUID] = true
			var who string
			var i int
			if _, err := fmt.Sscan(textOf(e), &who, &i); err != nil {
				t.Fatalf("unexpected entry %q", textOf(e))
			}
			if i != next[who] {
				t.Errorf("%s: entry %d where %d was next", who, i, next[who])
			}
			next[who] = i + 1
		}
	}
}

// testDeleteRacingAppend: a writer on a appends batches while b deletes
// the session; the result is nil or a whole-batch suffix (see above), and
// List agrees with Load.
func testDeleteRacingAppend(t *testing.T, a, b session.Store) {
	const n = 60
	var all []session.Entry
	for i := range n {
		all = append(all, entryN("cdcdcdcd", 2*i, fmt.Sprint(2*i)), entryN("cdcdcdcd", 2*i+1, fmt.Sprint(2*i+1)))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var appendErr, deleteErr error
	wg.Go(func() {
		defer close(done)
		for i := range n {
			if err := a.Append(ctx, key(sid), all[2*i:2*i+2]); err != nil {
				appendErr = err
				return
			}
		}
	})
	wg.Go(func() {
		for {
			if err := b.Delete(ctx, key(sid)); err != nil {
				deleteErr = err
				return
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	wg.Wait()
	if appendErr != nil || deleteErr != nil {
		t.Fatalf("Append: %v; Delete: %v", appendErr, deleteErr)
	}
	for _, s := range []session.Store{a, b} {
		got := mustLoad(t, s, key(sid))
		if len(got)%2 != 0 || len(got) > len(all) {
			t.Fatalf("%d entries after a delete raced the appends: not whole batches", len(got))
		}
		if diff := cmp.Diff(all[len(all)-len(got):], got, Equal); diff != "" {
			t.Errorf("after a delete raced the appends: not a suffix of the batches (-suffix +got):\n%s", diff)
		}
		ls, err := s.List(ctx, key(sid).ProjectKey)
		if err != nil {
			t.Fatal(err)
		}
		if listed := len(ls) == 1 && ls[0].SessionID == sid; listed != (got != nil) || len(ls) > 1 {
			t.Errorf("List = %v while Load holds %d entries", ls, len(got))
		}
	}
	// Whatever survived is the start of a working transcript again.
	mustAppend(t, b, key(sid), all[:2])
	if got := mustLoad(t, a, key(sid)); len(got) < 2 || len(got)%2 != 0 {
		t.Errorf("appending after the race: %d entries", len(got))
	}
}

// testLargeEntry: a 1 MiB entry (escapes, NUL, non-ASCII) round-trips.
func testLargeEntry(t *testing.T, s session.Store) {
	big := strings.Repeat("0123456789abcdef\n\"\\é\x00\t<>&\u2028", 1<<20/28+1)
	es := []session.Entry{entryN("bcbcbcbc", 1, big), textEntry(2)}
	mustAppend(t, s, key(sid), es)
	got := mustLoad(t, s, key(sid))
	if len(got) != 2 || textOf(got[0]) != big {
		t.Fatalf("a %d-byte entry did not round-trip (%d entries)", len(big), len(got))
	}
	if diff := cmp.Diff(es, got, Equal); diff != "" {
		t.Errorf("large entry (-appended +loaded):\n%s", diff)
	}
}

// testLongTranscript: 10,000 entries, appended in import-sized batches,
// load back in order.
func testLongTranscript(t *testing.T, s session.Store) {
	const n = 10000
	all := make([]session.Entry, n)
	for i := range all {
		all[i] = entryN("dededede", i, fmt.Sprint(i))
	}
	for i := 0; i < n; i += session.ImportBatch {
		mustAppend(t, s, key(sid), all[i:min(i+session.ImportBatch, n)])
	}
	got := mustLoad(t, s, key(sid))
	if len(got) != n {
		t.Fatalf("%d entries loaded, want %d", len(got), n)
	}
	for i, e := range got {
		if e.UUID != all[i].UUID || textOf(e) != textOf(all[i]) {
			t.Fatalf("entry %d is %s %q, want %s %q", i, e.UUID, textOf(e), all[i].UUID, textOf(all[i]))
		}
	}
}

// testTwoInstances: what one instance writes, the other reads, lists and
// deletes; a batch re-sent through the other instance is not stored twice.
func testTwoInstances(t *testing.T, a, b session.Store) {
	es := Conversation("efefefef")
	mustAppend(t, a, key(sid), es)
	if diff := cmp.Diff(es, mustLoad(t, b, key(sid)), Equal); diff != "" {
		t.Errorf("written on a, loaded on b (-appended +loaded):\n%s", diff)
	}
	var withUUID []session.Entry
	for _, e := range es {
		if e.UUID != "" {
			withUUID = append(withUUID, e)
		}
	}
	mustAppend(t, b, key(sid), withUUID) // the same batch, retried from another host
	if got := mustLoad(t, a, key(sid)); len(got) != len(es) {
		t.Errorf("a batch re-sent through b: %d entries, want %d", len(got), len(es))
	}
	sub := key(sid)
	sub.Subpath = "subagents/agent-a1"
	mustAppend(t, b, sub, []session.Entry{textEntry(1)})
	if subs, err := a.ListSubkeys(ctx, sub.ProjectKey, sid); err != nil || len(subs) != 1 || subs[0] != sub.Subpath {
		t.Errorf("ListSubkeys on a after b wrote a sub-transcript = %v, %v", subs, err)
	}
	if ls, err := b.List(ctx, sub.ProjectKey); err != nil || len(ls) != 1 || ls[0].SessionID != sid {
		t.Errorf("List on b = %v, %v; want %s", ls, err, sid)
	}
	if err := b.Delete(ctx, key(sid)); err != nil {
		t.Fatal(err)
	}
	for _, k := range []session.Key{key(sid), sub} {
		if got := mustLoad(t, a, k); got != nil {
			t.Errorf("Load(%v) on a after b deleted the session = %d entries, want nil", k, len(got))
		}
	}
	mustAppend(t, a, key(sid), es[:2])
	if got := mustLoad(t, b, key(sid)); len(got) != 2 {
		t.Errorf("re-created on a after the delete: b loads %d entries, want 2", len(got))
	}
}
