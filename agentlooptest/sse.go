package agentlooptest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/agentloop/agentloop/model"
)

// wireMessage is a message object in the API's field order.
type wireMessage struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []model.Content `json:"content"`
	StopReason   *string         `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        any             `json:"usage"`
}

type evMessageStart struct {
	Type    string      `json:"type"`
	Message wireMessage `json:"message"`
}

type evBlockStart struct {
	Type         string `json:"type"`
	Index        int    `json:"index"`
	ContentBlock any    `json:"content_block"`
}

type evBlockDelta struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
	Delta any    `json:"delta"`
}

type evBlockStop struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

type evMessageDelta struct {
	Type  string `json:"type"`
	Delta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage any `json:"usage"`
}

type evType struct {
	Type string `json:"type"`
}

type evError struct {
	Type  string    `json:"type"`
	Error errorBody `json:"error"`
}

type errorBody struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type textStart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type thinkingStart struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type toolStart struct {
	Type  string          `json:"type"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type redactedStart struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

type textDelta struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type jsonDelta struct {
	Type        string `json:"type"`
	PartialJSON string `json:"partial_json"`
}

type thinkingDelta struct {
	Type     string `json:"type"`
	Thinking string `json:"thinking"`
}

type signatureDelta struct {
	Type      string `json:"type"`
	Signature string `json:"signature"`
}

// sseEvent is one encoded server-sent event.
type sseEvent []byte

// message returns the complete message of a resolved reply.
func message(r *Reply) wireMessage {
	stop := r.StopReason
	content := r.Content
	if content == nil {
		content = []model.Content{}
	}
	return wireMessage{
		ID: r.ID, Type: "message", Role: "assistant", Model: r.Model,
		Content: content, StopReason: &stop, StopSequence: stopSequence(r), Usage: r.Usage,
	}
}

func stopSequence(r *Reply) *string {
	if r.StopSequence == "" {
		return nil
	}
	seq := r.StopSequence
	return &seq
}

// streamEvents encodes the event stream of a resolved reply, as the reference
// fake API sends it.
func streamEvents(r *Reply) ([]sseEvent, error) {
	var evs []sseEvent
	var err error
	add := func(typ string, data any) {
		if err != nil {
			return
		}
		var ev sseEvent
		ev, err = encodeEvent(typ, data)
		evs = append(evs, ev)
	}

	start := message(r)
	start.Content = []model.Content{}
	start.StopReason = nil
	start.StopSequence = nil
	su := r.Usage
	su.OutputTokens = min(1, su.OutputTokens)
	start.Usage = su
	add("message_start", evMessageStart{Type: "message_start", Message: start})

	if r.StreamError != nil && len(r.Content) == 0 {
		add("error", evError{Type: "error", Error: errorBody{r.StreamError.Type, r.StreamError.Message}})
		return evs, err
	}
	add("ping", evType{"ping"})

	chunk := r.Chunk
	if chunk <= 0 {
		chunk = DefaultChunk
	}
	for i, b := range r.Content {
		delta := func(d any) { add("content_block_delta", evBlockDelta{"content_block_delta", i, d}) }
		blockStart := func(cb any) { add("content_block_start", evBlockStart{"content_block_start", i, cb}) }
		switch b.Type {
		case model.TypeText:
			blockStart(textStart{Type: model.TypeText})
			parts := split(b.Text, chunk)
			if len(parts) == 0 {
				parts = []string{""}
			}
			for _, p := range parts {
				delta(textDelta{"text_delta", p})
			}
		case model.TypeToolUse, model.TypeServerToolUse:
			blockStart(toolStart{Type: b.Type, ID: b.ID, Name: b.Name, Input: json.RawMessage("{}")})
			delta(jsonDelta{"input_json_delta", ""})
			for _, p := range split(string(compactJSON(b.Input)), chunk) {
				delta(jsonDelta{"input_json_delta", p})
			}
		case model.TypeThinking:
			blockStart(thinkingStart{Type: model.TypeThinking})
			for _, p := range split(b.Thinking, chunk) {
				delta(thinkingDelta{"thinking_delta", p})
			}
			delta(signatureDelta{"signature_delta", b.Signature})
		case model.TypeRedactedThinking:
			blockStart(redactedStart{Type: b.Type, Data: b.Data})
		default:
			blockStart(b)
		}
		add("content_block_stop", evBlockStop{"content_block_stop", i})
	}

	if r.StreamError != nil {
		add("error", evError{Type: "error", Error: errorBody{r.StreamError.Type, r.StreamError.Message}})
		return evs, err
	}
	md := evMessageDelta{Type: "message_delta"}
	md.Delta.StopReason = r.StopReason
	md.Delta.StopSequence = stopSequence(r)
	md.Usage = r.Usage
	if r.DeltaUsage == DeltaUsageOutputOnly {
		md.Usage = struct {
			OutputTokens int64 `json:"output_tokens"`
		}{r.Usage.OutputTokens}
	}
	add("message_delta", md)
	add("message_stop", evType{"message_stop"})
	return evs, err
}

// encodeEvent encodes one event as "event: <typ>\ndata: <json>\n\n".
func encodeEvent(typ string, data any) (sseEvent, error) {
	js, err := encodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%s event: %w", typ, err)
	}
	ev := make([]byte, 0, len(typ)+len(js)+16)
	ev = append(ev, "event: "...)
	ev = append(ev, typ...)
	ev = append(ev, "\ndata: "...)
	ev = append(ev, js...)
	ev = append(ev, "\n\n"...)
	return ev, nil
}

// encodeJSON marshals v without HTML escaping and without a final newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// compactJSON returns js compacted, or verbatim if it is not valid JSON.
func compactJSON(js json.RawMessage) []byte {
	if len(js) == 0 {
		return []byte("{}")
	}
	var buf bytes.Buffer
	if json.Compact(&buf, js) != nil {
		return js
	}
	return buf.Bytes()
}

// split cuts s into pieces of at most n runes.
func split(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for c := 0; c < n && i < len(s); c++ {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}
