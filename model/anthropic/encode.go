package anthropic

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/agentloop/agentloop/model"
)

// encoder writes request bodies. Its output is byte for byte what
// json.Marshal gives for the request with Stream set, but it writes the
// messages without reflection, encodes each message of a history once (see
// [msgCache]) and each distinct system prompt and tools array once (a
// session sends the same ones every turn; see [mru]), and writes into a
// pooled buffer, so the body is one allocation of its exact size. It is
// safe for concurrent use.
type encoder struct {
	msgs   msgCache
	system mru[[]model.Content, systemField]
	tools  mru[[]model.ToolDef, toolsField]
}

// scratch holds the buffers bodies are written in before being copied
// out: the body itself goes to the HTTP client, which may hold it for a
// while, so it cannot be reused.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// maxScratch is the largest buffer scratch keeps.
const maxScratch = 4 << 20

// encode returns req's body with "stream": true.
func (e *encoder) encode(req *model.Request) ([]byte, error) {
	sp := scratch.Get().(*[]byte)
	b, err := e.appendBody((*sp)[:0], req)
	var body []byte
	if err == nil {
		body = slices.Clone(b)
	}
	if cap(b) <= maxScratch {
		*sp = b
		scratch.Put(sp)
	}
	return body, err
}

// appendBody appends req's body to b.
func (e *encoder) appendBody(b []byte, req *model.Request) ([]byte, error) {
	b = append(b, `{"model":`...)
	b = model.AppendString(b, req.Model)
	b = append(b, `,"messages":`...)
	if req.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range req.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			// The last message is not kept: the loop sends it with a
			// cache breakpoint, a copy made for this request only.
			var err error
			if b, err = e.msgs.appendMessage(b, &req.Messages[i], i < len(req.Messages)-1); err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
		}
		b = append(b, ']')
	}
	if len(req.System) > 0 {
		system, err := e.system.encoded(req.System)
		if err != nil {
			return nil, fmt.Errorf("system: %w", err)
		}
		b = append(b, `,"system":`...)
		b = append(b, system...)
	}
	if len(req.Tools) > 0 {
		tools, err := e.tools.encoded(req.Tools)
		if err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
		b = append(b, `,"tools":`...)
		b = append(b, tools...)
	}
	if m := req.Metadata; m != nil {
		b = append(b, `,"metadata":{`...)
		if m.UserID != "" {
			b = append(b, `"user_id":`...)
			b = model.AppendString(b, m.UserID)
		}
		b = append(b, '}')
	}
	b = append(b, `,"max_tokens":`...)
	b = strconv.AppendInt(b, int64(req.MaxTokens), 10)
	// The small optional objects, through reflection.
	for _, f := range [...]struct {
		name string
		v    any
		set  bool
	}{
		{"thinking", req.Thinking, req.Thinking != nil},
		{"context_management", req.ContextManagement, req.ContextManagement != nil},
		{"output_config", req.Output, req.Output != nil},
	} {
		if !f.set {
			continue
		}
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.name, err)
		}
		b = append(b, `,"`...)
		b = append(b, f.name...)
		b = append(b, `":`...)
		b = append(b, v...)
	}
	return append(b, `,"stream":true}`...), nil
}
