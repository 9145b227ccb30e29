package anthropic

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"
	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/internal/sse"
)

type sseEvent struct {
	Type string
	Data string
}

// sdkEvents splits body with the SDK's decoder, the reader's oracle.
func sdkEvents(body []byte) (evs []sseEvent, failed bool) {
	dec := ssestream.NewDecoder(&http.Response{Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body))})
	for dec.Next() {
		evs = append(evs, sseEvent{dec.Event().Type, string(dec.Event().Data)})
	}
	return evs, dec.Err() != nil
}

// ownEvents splits body with sseReader, reading it in chunks of at most
// chunk bytes.
func ownEvents(body []byte, chunk int) (evs []sseEvent, failed bool) {
	r := io.Reader(bytes.NewReader(body))
	if chunk > 0 {
		r = iotest.OneByteReader(r)
	}
	dec := sse.NewReader(r, 4<<10, eventNames...)
	for dec.Next() {
		evs = append(evs, sseEvent{dec.Event(), string(dec.Data())})
	}
	return evs, dec.Err() != nil
}

func checkSSE(t *testing.T, body []byte) {
	t.Helper()
	want, wantFailed := sdkEvents(body)
	for _, chunk := range []int{0, 1} {
		got, failed := ownEvents(body, chunk)
		if diff := cmp.Diff(want, got); diff != "" || failed != wantFailed {
			t.Fatalf("body %q (chunk %d): failed %v, SDK failed %v; events (-SDK +own):\n%s", body, chunk, failed, wantFailed, diff)
		}
	}
}

func sseCases() []string {
	return []string{
		helloStream(),
		streamBody(),
		"",
		"\n\n\n",
		"event: a\n\n",
		"data: x\n\n",
		"data:x\ndata:  y\ndata\n\n",
		"event:a\r\ndata: b\r\n\r\n",
		": comment\nid: 7\nretry: 10\nevent: ping\ndata: {}\n\n",
		"event: a\ndata: no blank line at the end",
		"event: a\ndata: b\n\nevent: c\n",
		"data: a\r\r\n\n",
		"event: x:y\ndata: :z\n\n",
		"\r\n\r\nevent: q\n\n",
		"data: " + strings.Repeat("x", 40<<10) + "\n\n",
	}
}

// TestSSEReaderMatchesSDK shows that sseReader splits bodies into the
// events the SDK's decoder did, read whole or a byte at a time, on the
// cases and on random edits of them.
func TestSSEReaderMatchesSDK(t *testing.T) {
	for _, c := range sseCases() {
		checkSSE(t, []byte(c))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("\n\r: abdeintv")
	cases := sseCases()[:14]
	for range 3000 {
		b := []byte(cases[rng.IntN(len(cases))])
		for range 1 + rng.IntN(4) {
			i := rng.IntN(len(b) + 1)
			c := alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(2) == 0 && i < len(b) {
				b[i] = c
			} else {
				b = append(b[:i], append([]byte{c}, b[i:]...)...)
			}
		}
		checkSSE(t, b)
	}
}

// TestSSEReaderKeepsData shows that the data of an event is not
// overwritten by the events after it (the handler may keep it).
func TestSSEReaderKeepsData(t *testing.T) {
	dec := sse.NewReader(strings.NewReader("data: first\n\ndata: second\n\n"), 4<<10)
	if !dec.Next() {
		t.Fatal("no first event")
	}
	first := dec.Data()
	if !dec.Next() {
		t.Fatal("no second event")
	}
	if string(first) != "first\n" {
		t.Errorf("first event's data became %q", first)
	}
}
