package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// timeline is the clock readings of one in-process session, taken by
// timingTransport (requests) and by the goroutine draining the session's
// stream (tool calls, result). It is safe for concurrent use.
type timeline struct {
	mu        sync.Mutex
	start     time.Time   // Query called
	reqStart  []time.Time // messages request handed to the HTTP transport (body already encoded)
	respEnd   []time.Time // its response body read to the end (or closed)
	toolStart []time.Time // assistant message with the tool call yielded
	toolEnd   []time.Time // user message with the tool result yielded
	result    time.Time   // result message yielded
}

type timelineKey struct{}

// withTimeline returns ctx carrying tl, for timingTransport to find.
func withTimeline(ctx context.Context, tl *timeline) context.Context {
	return context.WithValue(ctx, timelineKey{}, tl)
}

func (tl *timeline) begin(at time.Time) int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.reqStart = append(tl.reqStart, at)
	tl.respEnd = append(tl.respEnd, time.Time{})
	return len(tl.reqStart) - 1
}

func (tl *timeline) end(i int, at time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	if tl.respEnd[i].IsZero() {
		tl.respEnd[i] = at
	}
}

func (tl *timeline) tool(start, end time.Time) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.toolStart = append(tl.toolStart, start)
	tl.toolEnd = append(tl.toolEnd, end)
}

// turns returns the number of requests whose response was read to the end.
func (tl *timeline) turns() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	n := 0
	for _, t := range tl.respEnd {
		if !t.IsZero() {
			n++
		}
	}
	return n
}

// overheads returns the session's set-up time (Query called to first
// request sent) and its loop overhead per tool turn: for turn k ≥ 1, the
// time from the end of reply k−1 to request k being sent, less the time the
// tool of reply k−1 ran (from the later of the reply's end and its
// assistant message reaching the consumer, to the tool result reaching the
// consumer or request k being sent, whichever is first). ok is false when
// the session's readings do not have that shape (a retry, a failure), and
// then it contributes no samples.
func (tl *timeline) overheads() (setup time.Duration, between []time.Duration, ok bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	n := len(tl.reqStart)
	if n == 0 || len(tl.toolStart) != n-1 {
		return 0, nil, false
	}
	for _, t := range tl.respEnd {
		if t.IsZero() {
			return 0, nil, false
		}
	}
	setup = tl.reqStart[0].Sub(tl.start)
	for k := 1; k < n; k++ {
		end, next := tl.respEnd[k-1], tl.reqStart[k]
		ts := tl.toolStart[k-1]
		if ts.Before(end) {
			ts = end
		}
		te := tl.toolEnd[k-1]
		if te.After(next) {
			te = next
		}
		tool := max(te.Sub(ts), 0)
		between = append(between, next.Sub(end)-tool)
	}
	return setup, between, true
}

// timingTransport reads the clock around each messages request of a
// session whose context carries a timeline.
type timingTransport struct{ base http.RoundTripper }

func (t *timingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tl, _ := r.Context().Value(timelineKey{}).(*timeline)
	if tl == nil || !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		return t.base.RoundTrip(r)
	}
	i := tl.begin(time.Now())
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if resp.ProtoMajor == 2 {
		http2Replies.Add(1)
	}
	resp.Body = &timedBody{ReadCloser: resp.Body, tl: tl, i: i}
	return resp, nil
}

// http2Replies counts the replies that came over HTTP/2, for the
// record's http2_share.
var http2Replies atomic.Int64

// timedBody marks the end of a response when it is read to EOF or closed.
type timedBody struct {
	io.ReadCloser
	tl *timeline
	i  int
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.tl.end(b.i, time.Now())
	}
	return n, err
}

func (b *timedBody) Close() error {
	b.tl.end(b.i, time.Now())
	return b.ReadCloser.Close()
}
