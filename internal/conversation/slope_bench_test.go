//go:build unix

package conversation_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
)

// slopeTurns is how many tool turns BenchmarkLongSession's session makes.
const slopeTurns = 1000

// BenchmarkLongSession (issue 34) runs one session of slopeTurns small tool calls
// (an echo tool, a few dozen bytes each way) through agentloop.Query and
// the Anthropic provider, whose HTTP transport stays in this process: it
// copies each request body into a buffer, as a connection's writer would,
// and answers at once with a canned stream. It fits a line to the CPU time
// of each turn (the process's, from one request to the next: the reply
// decoded, the tool run, the next request built, encoded and copied)
// against the size of the request, and reports its slope as
// cpu-ns/KB: what each KB of history adds to a turn. "nomemo" sends the
// same requests without the session's memo, so the provider encodes the
// history afresh each turn but for its large messages (the behaviour
// before requests extended their predecessor): the baseline, in the same
// run. "memo-transcript" is "memo" with the session's transcript written,
// as by default.
func BenchmarkLongSession(b *testing.B) {
	for _, mode := range []string{"memo", "nomemo", "memo-transcript"} {
		b.Run(mode, func(b *testing.B) {
			var slope, perTurn, lastKB float64
			for b.Loop() {
				slope, perTurn, lastKB = longSession(b, mode != "nomemo", mode == "memo-transcript")
			}
			b.ReportMetric(slope, "cpu-ns/KB")
			b.ReportMetric(perTurn, "cpu-ns/turn")
			b.ReportMetric(lastKB, "last-KB")
		})
	}
}

// longSession runs the session and returns the fitted slope (CPU ns per
// KB of request), the mean CPU per turn and the last request's size in KB.
func longSession(b *testing.B, memo, transcript bool) (slope, perTurn, lastKB float64) {
	tr, p := cannedProvider(b, slopeTurns)
	var prov model.Provider = p
	if !memo {
		prov = noMemo{p}
	}
	echo := agentloop.NewTool("echo", "Echo the text.", func(ctx context.Context, in struct {
		Text string `json:"text"`
	}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		return agentloop.ToolResult{Content: []model.Content{model.TextBlock("echo: " + in.Text)}}, nil
	}, &agentloop.ToolOptions{ReadOnly: true})
	opts := &agentloop.Options{Provider: prov, Cwd: b.TempDir(), Tools: []string{}, CustomTools: []agentloop.Tool{echo},
		NoSessionPersistence: !transcript, MaxTurns: 2 * slopeTurns}
	res, err := agentloop.Query(context.Background(), "Echo things.", opts).Result()
	if err != nil || res.NumTurns != slopeTurns+1 {
		b.Fatalf("err %v, turns %d", err, res.NumTurns)
	}
	// Turn k's CPU is from request k−1 to request k; fit it against
	// request k's size, leaving out the first turns (warming up).
	var sx, sy, sxx, sxy, n float64
	for k := 10; k < len(tr.cpu); k++ {
		x, y := float64(tr.size[k])/1024, float64(tr.cpu[k]-tr.cpu[k-1])
		sx, sy, sxx, sxy, n = sx+x, sy+y, sxx+x*x, sxy+x*y, n+1
	}
	slope = (n*sxy - sx*sy) / (n*sxx - sx*sx)
	return slope, sy / n, float64(tr.size[len(tr.size)-1]) / 1024
}

// cannedProvider returns the Anthropic provider on a cannedTransport of
// turns tool calls, and the transport.
func cannedProvider(b *testing.B, turns int) (*cannedTransport, *anthropic.Provider) {
	tr := &cannedTransport{turns: turns}
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-bench", BaseURL: "http://api.invalid",
		HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		b.Fatal(err)
	}
	return tr, p
}

// noMemo is a provider whose requests carry no memo.
type noMemo struct{ p model.Provider }

func (n noMemo) Stream(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	r := *req
	r.Memo = nil
	return n.p.Stream(ctx, &r, h)
}

// cannedTransport answers the k-th request with a call of the echo tool
// while k < turns, then with a text, recording the process's CPU time
// when each request arrives and its size.
type cannedTransport struct {
	turns int
	buf   bytes.Buffer
	cpu   []int64
	size  []int64
}

func (t *cannedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.cpu = append(t.cpu, processCPU())
	t.buf.Reset()
	n, err := t.buf.ReadFrom(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	t.size = append(t.size, n)
	k := len(t.size)
	var s string
	if k <= t.turns {
		s = toolUseStream(fmt.Sprintf("toolu_%06d", k), fmt.Sprintf(`{"text":"ping %d"}`, k))
	} else {
		s = sseEvent("message_start", slopeStart) +
			sseEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`) +
			sseEvent("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Done."}}`) +
			sseEvent("content_block_stop", `{"type":"content_block_stop","index":0}`) +
			sseEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}`) +
			sseEvent("message_stop", `{"type":"message_stop"}`)
	}
	return &http.Response{StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req,
		Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(strings.NewReader(s))}, nil
}

const slopeStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-5-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":30,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`

func sseEvent(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }

// toolUseStream is a reply calling the echo tool with input.
func toolUseStream(id, input string) string {
	return sseEvent("message_start", slopeStart) +
		sseEvent("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"`+id+`","name":"echo","input":{}}}`) +
		sseEvent("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%q}}`, input)) +
		sseEvent("content_block_stop", `{"type":"content_block_stop","index":0}`) +
		sseEvent("message_delta", `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}`) +
		sseEvent("message_stop", `{"type":"message_stop"}`)
}
