package anthropic

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/model"
)

// ev formats one server-sent event.
func ev(name, data string) string {
	return "event: " + name + "\ndata: " + data + "\n\n"
}

// Events of a plain reply, for building streams.
const (
	evStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-5-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":300,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`
	evPing  = `{"type": "ping"}`
	evStop  = `{"type":"message_stop"}`
)

func textStart(i int) string {
	return fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"text","text":""}}`, i)
}

func textDelta(i int, s string) string {
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%q}}`, i, s)
}

func blockStop(i int) string {
	return fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i)
}

func msgDelta(stop string, outputTokens int) string {
	return fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, outputTokens)
}

// helloStream is a complete reply saying "Hello world".
func helloStream() string {
	return ev("message_start", evStart) +
		ev("content_block_start", textStart(0)) +
		ev("ping", evPing) +
		ev("content_block_delta", textDelta(0, "Hello")) +
		ev("content_block_delta", textDelta(0, " world")) +
		ev("content_block_stop", blockStop(0)) +
		ev("message_delta", msgDelta("end_turn", 7)) +
		ev("message_stop", evStop)
}

// helloResponse is what helloStream assembles into, with the fake clock's
// TTFT and Duration and the fake server's request id.
func helloResponse() *model.Response {
	return &model.Response{
		ID:         "msg_1",
		Type:       "message",
		Role:       "assistant",
		Model:      "claude-opus-5-5",
		Content:    []model.Content{model.TextBlock("Hello world")},
		StopReason: "end_turn",
		Usage:      model.Usage{InputTokens: 300, OutputTokens: 7},
		StartUsage: model.Usage{InputTokens: 300, OutputTokens: 1},
		RequestID:  "req_1",
		TTFT:       time.Second,
		Duration:   2 * time.Second,
	}
}

// reply is one scripted answer of the fake API.
type reply func(w http.ResponseWriter, r *http.Request)

// sseReply answers 200 with body as an event stream.
func sseReply(body string) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("request-id", "req_1")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, body)
	}
}

// errorReply answers status with the API's error body.
func errorReply(status int, typ, msg string, headers ...string) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("request-id", fmt.Sprintf("req_err_%d", status))
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":%q}}`, typ, msg)
	}
}

// hangupReply sends head, a chunk of the body, and drops the connection.
func hangupReply(body string) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n", len(body), body)
		buf.Flush()
	}
}

// recorded is one request the fake API received.
type recorded struct {
	Method, Path, Query string
	Header              http.Header
	Body                []byte
}

// fakeAPI is a scripted Messages API: the nth request gets replies[n], or the
// last reply once the script runs out.
type fakeAPI struct {
	*httptest.Server
	mu      sync.Mutex
	replies []reply
	reqs    []recorded
}

func newFakeAPI(t *testing.T, replies ...reply) *fakeAPI {
	t.Helper()
	f := &fakeAPI{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Clone(), body})
		rp := f.replies[min(n, len(f.replies)-1)]
		f.mu.Unlock()
		rp(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAPI) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// fakeClock advances one second on every reading.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// sleeper records the delays it is asked to wait, without waiting.
type sleeper struct {
	mu     sync.Mutex
	delays []time.Duration
}

func (s *sleeper) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.delays = append(s.delays, d)
	s.mu.Unlock()
	return ctx.Err()
}

// testProvider returns a provider for f with a fake clock, no jitter and a
// recording sleep, after applying edit to its options.
func testProvider(t *testing.T, f *fakeAPI, edit func(*Options)) (*Provider, *sleeper) {
	t.Helper()
	s := &sleeper{}
	o := &Options{
		APIKey:  "sk-test",
		BaseURL: f.URL,
		Sleep:   s.Sleep,
		Now:     (&fakeClock{}).Now,
		Jitter:  func() float64 { return 0 },
	}
	if edit != nil {
		edit(o)
	}
	p, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p, s
}

func intp(n int) *int { return &n }

// recorder is a Handler that logs every call.
type recorder struct {
	log     []string
	events  []model.StreamEvent
	blocks  []blockCall
	retries []model.RetryInfo
	onEvent func(model.StreamEvent)
	onRetry func(model.RetryInfo)
}

type blockCall struct {
	Index int
	Block model.Content
	Start *model.Response
}

func (r *recorder) Event(e model.StreamEvent) {
	r.log = append(r.log, "event:"+e.Type)
	r.events = append(r.events, e)
	if r.onEvent != nil {
		r.onEvent(e)
	}
}

func (r *recorder) Block(i int, b model.Content, start *model.Response) {
	r.log = append(r.log, fmt.Sprintf("block:%d", i))
	r.blocks = append(r.blocks, blockCall{i, b, start})
}

func (r *recorder) Retry(info model.RetryInfo) {
	r.log = append(r.log, "retry")
	r.retries = append(r.retries, info)
	if r.onRetry != nil {
		r.onRetry(info)
	}
}

// simpleRequest is a small request.
func simpleRequest() *model.Request {
	return &model.Request{
		Model:     "claude-opus-5-5",
		MaxTokens: 1024,
		Messages:  []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("Say hello")}}},
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
