package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/model"
)

// TestBodyReaderMatchesMarshal shows that what a body's reader yields is
// json.Marshal's bytes, read in large reads, a byte at a time and through
// WriteTo, for a body built afresh and one served from the caches, and
// that a body reads the same every time (as a retried request re-sends
// it). It also shows that every segment is clipped, so that no append can
// write into the bytes after it.
func TestBodyReaderMatchesMarshal(t *testing.T) {
	defs := builtinToolDefs(t)
	reads := map[string]func(r *bodyReader) ([]byte, error){
		"ReadAll": func(r *bodyReader) ([]byte, error) { return io.ReadAll(r) },
		"one byte": func(r *bodyReader) ([]byte, error) {
			return io.ReadAll(iotest.OneByteReader(r))
		},
		"half": func(r *bodyReader) ([]byte, error) { return io.ReadAll(iotest.HalfReader(r)) },
		"WriteTo": func(r *bodyReader) ([]byte, error) {
			var buf bytes.Buffer
			_, err := r.WriteTo(&buf)
			return buf.Bytes(), err
		},
	}
	for name, req := range map[string]*model.Request{
		"history": historyRequest(40, defs),
		"short":   historyRequest(3, defs[:2]),
		"bare":    {Model: "m"},
	} {
		t.Run(name, func(t *testing.T) {
			want := marshalBody(t, req)
			var e encoder
			for round := range 2 { // the second round serves the history and tools from the caches
				b, err := e.body(req)
				if err != nil {
					t.Fatal(err)
				}
				if b.n != len(want) {
					t.Errorf("round %d: n = %d, want %d", round, b.n, len(want))
				}
				for i, s := range b.segs {
					if len(s) == 0 || cap(s) != len(s) {
						t.Errorf("round %d: segment %d has len %d, cap %d; want a non-empty clipped segment", round, i, len(s), cap(s))
					}
				}
				for rname, read := range reads {
					for k := range 2 {
						got, err := read(b.reader())
						if err != nil {
							t.Fatalf("round %d, %s #%d: %v", round, rname, k, err)
						}
						if diff := cmp.Diff(want, string(got)); diff != "" {
							t.Fatalf("round %d, %s #%d (-json.Marshal +reader):\n%s", round, rname, k, diff)
						}
					}
				}
				if diff := cmp.Diff(want, string(b.bytes())); diff != "" {
					t.Fatalf("round %d, bytes (-json.Marshal +bytes):\n%s", round, diff)
				}
			}
		})
	}
}

// sentRequest is what a server received.
type sentRequest struct {
	length   int64
	chunked  bool
	body     string
	received int
}

// bodyServer answers every request with a short stream after failing the
// first fail of them with a 500, and records what it received.
func bodyServer(t *testing.T, fail int) (*httptest.Server, func() []sentRequest) {
	t.Helper()
	var (
		mu   sync.Mutex
		sent []sentRequest
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(sent)
		sent = append(sent, sentRequest{length: r.ContentLength, chunked: slices.Contains(r.TransferEncoding, "chunked"), body: string(b), received: len(b)})
		mu.Unlock()
		if n < fail {
			errorReply(http.StatusInternalServerError, "api_error", "try again")(w, r)
			return
		}
		sseReply(helloStream())(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []sentRequest {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(sent)
	}
}

// TestBodySentWithLength shows that the provider sends the body's bytes
// with a Content-Length, not chunked, on the first attempt and again on a
// retry.
func TestBodySentWithLength(t *testing.T) {
	srv, sent := bodyServer(t, 1)
	p, err := New(&Options{APIKey: "sk-test", BaseURL: srv.URL, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	req := historyRequest(12, builtinToolDefs(t))
	if _, err := p.Stream(context.Background(), req, nil); err != nil {
		t.Fatal(err)
	}
	want := marshalBody(t, req)
	got := sent()
	if len(got) != 2 {
		t.Fatalf("server received %d requests, want 2 (one failed, one retry)", len(got))
	}
	for i, r := range got {
		if diff := cmp.Diff(sentRequest{length: int64(len(want)), body: want, received: len(want)}, r, cmp.AllowUnexported(sentRequest{})); diff != "" {
			t.Errorf("attempt %d (-want +got):\n%s", i, diff)
		}
	}
}

// TestSharedSegmentsUntouched runs two sessions at once (run it with
// -race) that share a provider and the tools list, each with its own
// history growing every turn, and shows that every body sent is
// json.Marshal's and that the shared bytes the caches keep (the tools'
// JSON) are unchanged afterwards.
func TestSharedSegmentsUntouched(t *testing.T) {
	srv, sent := bodyServer(t, 0)
	p, err := New(&Options{APIKey: "sk-test", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defs := builtinToolDefs(t)
	toolsJSON, err := json.Marshal(defs)
	if err != nil {
		t.Fatal(err)
	}
	const turns = 6
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		wanted = map[string]bool{}
	)
	for s := range 2 {
		wg.Go(func() {
			req := historyRequest(4+s, defs)
			for turn := range turns {
				req.Messages = append(slices.Clip(req.Messages),
					model.Message{Role: "assistant", Content: []model.Content{model.TextBlock(fmt.Sprintf("session %d, turn %d: %s", s, turn, fileText(turn)))}},
					model.Message{Role: "user", Content: []model.Content{model.TextBlock(fmt.Sprintf("go on %d %d", s, turn))}})
				want := marshalBody(t, req)
				mu.Lock()
				wanted[want] = true
				mu.Unlock()
				if _, err := p.Stream(context.Background(), req, nil); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := sent()
	if len(got) != 2*turns {
		t.Fatalf("server received %d requests, want %d", len(got), 2*turns)
	}
	for i, r := range got {
		if !wanted[r.body] {
			t.Errorf("request %d: body is not json.Marshal's of any request sent", i)
		}
	}
	kept, err := p.enc.tools.encoded(defs)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kept, toolsJSON) {
		t.Errorf("the tools' kept JSON changed:\n%s", cmp.Diff(string(toolsJSON), string(kept)))
	}
}
