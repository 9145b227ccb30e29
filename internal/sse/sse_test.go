package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

type event struct{ Name, Data string }

func events(body string, keep bool) ([]event, error) {
	r := NewReader(strings.NewReader(body), 16, "ping")
	r.KeepUnterminated = keep
	var evs []event
	for r.Next() {
		evs = append(evs, event{r.Event(), string(r.Data())})
	}
	return evs, r.Err()
}

func TestReader(t *testing.T) {
	for _, c := range []struct {
		name, body string
		keep       bool
		want       []event
	}{
		{name: "two events", body: "event: ping\ndata: {}\n\ndata: a\ndata:b\n\n",
			want: []event{{"ping", "{}\n"}, {"", "a\nb\n"}}},
		{name: "CRLF, comments, other fields", body: ": hi\r\nid: 1\r\nevent: e\r\ndata: x\r\n\r\n",
			want: []event{{"e", "x\n"}}},
		{name: "no name nor data", body: "id: 1\n\n\n", want: nil},
		{name: "unterminated, dropped", body: "data: a\n\ndata: b", want: []event{{"", "a\n"}}},
		{name: "unterminated, kept", body: "data: a\n\ndata: b", keep: true,
			want: []event{{"", "a\n"}, {"", "b\n"}}},
		{name: "unterminated name, kept", body: "event: e\n", keep: true, want: []event{{"e", ""}}},
		{name: "line longer than the buffer", body: "data: " + strings.Repeat("x", 100) + "\n\n",
			want: []event{{"", strings.Repeat("x", 100) + "\n"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := events(c.body, c.keep)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReaderErrors: a read error and an over-long line end the stream
// with the error, after the events before them.
func TestReaderErrors(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("data: a\n\n"), errReader{boom}), 64)
	if !r.Next() || string(r.Data()) != "a\n" {
		t.Fatalf("first event: %v %q", r.Err(), r.Data())
	}
	if r.Next() || !errors.Is(r.Err(), boom) {
		t.Errorf("after the failing read: Next true or Err %v, want %v", r.Err(), boom)
	}
	long := NewReader(io.MultiReader(strings.NewReader("data: "), infinite{}), 4096)
	if long.Next() || !errors.Is(long.Err(), ErrLineTooLong) {
		t.Errorf("endless line: Err %v, want ErrLineTooLong", long.Err())
	}
}

// TestReaderKeepsData: an event's data is not overwritten by the next.
func TestReaderKeepsData(t *testing.T) {
	r := NewReader(strings.NewReader("data: first\n\ndata: second\n\n"), 64)
	r.Next()
	first := r.Data()
	r.Next()
	if string(first) != "first\n" {
		t.Errorf("first event's data became %q", first)
	}
}

// TestReaderInterns: a listed name costs no allocation.
func TestReaderInterns(t *testing.T) {
	// A name longer than the runtime's tiny allocations (16 bytes).
	body := []byte("event: content_block_delta\n\n")
	names := []string{"content_block_delta"}
	allocs := testing.AllocsPerRun(100, func() {
		r := NewReader(bytes.NewReader(body), 64, names...)
		for r.Next() {
		}
	})
	unlisted := testing.AllocsPerRun(100, func() {
		r := NewReader(bytes.NewReader(body), 64)
		for r.Next() {
		}
	})
	if allocs >= unlisted {
		t.Errorf("%v allocations with the name listed, %v without", allocs, unlisted)
	}
}

// FuzzReader checks the reader against the Anthropic SDK's decoder, whose
// rules it follows, and that KeepUnterminated adds at most the last event.
func FuzzReader(f *testing.F) {
	for _, s := range []string{"event: a\ndata: b\n\n", "data:x\r\ndata\n\n: c\n", "event: a\ndata: b", "\n\nid: 3\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		dec := ssestream.NewDecoder(&http.Response{Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))})
		var want []event
		for dec.Next() {
			want = append(want, event{dec.Event().Type, string(dec.Event().Data)})
		}
		got, err := events(body, false)
		if (err != nil) != (dec.Err() != nil) {
			t.Fatalf("error %v, SDK's %v", err, dec.Err())
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("body %q: events (-SDK +ours):\n%s", body, diff)
		}
		kept, _ := events(body, true)
		if len(kept) < len(got) || len(kept) > len(got)+1 || !cmp.Equal(kept[:len(got)], got, cmpopts.EquateEmpty()) {
			t.Fatalf("body %q: with KeepUnterminated %v, without %v", body, kept, got)
		}
	})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type infinite struct{}

func (infinite) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// TestPooledReader reads streams through pooled buffers one after the
// other: each reads its own events whatever the previous left in the
// buffer, and a released reader reads nothing more.
func TestPooledReader(t *testing.T) {
	for i := range 3 {
		body := fmt.Sprintf("event: a\ndata: %d\n\nevent: b\ndata: x%d\n\n", i, i)
		r := NewReader(strings.NewReader(body+"event: c\ndata: left over"), PooledSize, "a", "b")
		var got []string
		for len(got) < 2 && r.Next() {
			got = append(got, r.Event()+"="+string(r.Data()))
		}
		want := []string{fmt.Sprintf("a=%d\n", i), fmt.Sprintf("b=x%d\n", i)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("stream %d (-want +got):\n%s", i, diff)
		}
		r.Release()
		if r.Next() {
			t.Fatalf("stream %d: Next after Release read %q", i, r.Data())
		}
	}
}
