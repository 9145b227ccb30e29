package agentlooptest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// event is one server-sent event as a test client sees it.
type event struct {
	Name string // the event: line
	Data any    // the data: line, decoded
}

// readSSE reads server-sent events until r ends. The error is the read error
// that ended the stream (nil at a clean end).
func readSSE(r io.Reader) ([]event, error) {
	var evs []event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	var name, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if name == "" && data == "" {
				continue
			}
			var v any
			if err := json.Unmarshal([]byte(data), &v); err != nil {
				return evs, fmt.Errorf("event %q: bad data %q: %v", name, data, err)
			}
			evs = append(evs, event{name, v})
			name, data = "", ""
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		default:
			return evs, fmt.Errorf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		return evs, err
	}
	if name != "" || data != "" {
		return evs, fmt.Errorf("stream ended inside an event")
	}
	return evs, nil
}

// events parses want lines of the form "<event name> <json>".
func events(t *testing.T, lines ...string) []event {
	t.Helper()
	var evs []event
	for _, l := range lines {
		name, js, _ := strings.Cut(l, " ")
		var v any
		if err := json.Unmarshal([]byte(js), &v); err != nil {
			t.Fatalf("bad want line %q: %v", l, err)
		}
		evs = append(evs, event{name, v})
	}
	return evs
}

// decode decodes JSON into a generic value.
func decode(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("bad JSON %q: %v", b, err)
	}
	return v
}

// request returns a minimal messages request body.
func request(stream bool, text string) map[string]any {
	return map[string]any{
		"model":      "claude-test",
		"max_tokens": 1024,
		"stream":     stream,
		"messages":   []any{map[string]any{"role": "user", "content": text}},
	}
}

// post sends body (marshalled unless it is a string or []byte) to url.
func post(t *testing.T, url string, body any, header ...string) *http.Response {
	t.Helper()
	return postCtx(t, context.Background(), url, body, header...)
}

func postCtx(t *testing.T, ctx context.Context, url string, body any, header ...string) *http.Response {
	t.Helper()
	var b []byte
	switch v := body.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	default:
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Add(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// stream posts a streaming request and reads its events.
func stream(t *testing.T, url string, body any) (*http.Response, []event, error) {
	t.Helper()
	resp := post(t, url, body)
	defer resp.Body.Close()
	evs, err := readSSE(resp.Body)
	return resp, evs, err
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
