package anthropic

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/agentloop/agentloop/model"
)

// encoder writes request bodies. Its output is byte for byte what
// json.Marshal gives for the request with Stream set, but it writes the
// messages without reflection, encodes each message of a history once (see
// [msgCache]) and each distinct system prompt and tools array once (a
// session sends the same ones every turn; see [mru]), and does not copy
// what it keeps: the body is a list of segments (see [body]) that shares
// the kept bytes, and only the request's own bytes are written out, into a
// pooled buffer and then one allocation of their exact size. It is safe
// for concurrent use.
type encoder struct {
	msgs   msgCache
	system mru[[]model.Content, systemField]
	tools  mru[[]model.ToolDef, toolsField]
}

// scratch holds the builders bodies are assembled in before their own
// bytes are copied out: the body goes to the HTTP client, which may hold it
// for a while, so they cannot be reused.
var scratch = sync.Pool{New: func() any { return new(bodyBuilder) }}

// maxScratch is the largest buffer scratch keeps.
const maxScratch = 4 << 20

// body returns req's body with "stream": true.
func (e *encoder) body(req *model.Request) (body, error) {
	bb := scratch.Get().(*bodyBuilder)
	var b body
	err := e.build(bb, req)
	if err == nil {
		b = bb.body()
	}
	clear(bb.shared) // let the shared segments go with their owners
	bb.buf, bb.shared = bb.buf[:0], bb.shared[:0]
	if cap(bb.buf) <= maxScratch && cap(bb.shared) <= maxScratch/32 {
		scratch.Put(bb)
	}
	return b, err
}

// encode returns req's body joined in one slice (for the tests).
func (e *encoder) encode(req *model.Request) ([]byte, error) {
	b, err := e.body(req)
	if err != nil {
		return nil, err
	}
	return b.bytes(), nil
}

// build writes req's body into bb.
func (e *encoder) build(bb *bodyBuilder, req *model.Request) error {
	b, err := e.appendBody(bb, bb.buf[:0], req)
	if err != nil {
		return err
	}
	bb.buf = b
	return nil
}

// appendBody appends req's own bytes to b and records in bb the kept
// bytes shared in between, each at the length b had where it goes.
func (e *encoder) appendBody(bb *bodyBuilder, b []byte, req *model.Request) ([]byte, error) {
	b = append(b, `{"model":`...)
	b = model.AppendString(b, req.Model)
	b = append(b, `,"messages":`...)
	if req.Memo != nil && len(req.Messages) > 0 {
		h, _ := req.Memo.Take().(*history)
		if h == nil {
			h = new(history)
		}
		var err error
		b, err = h.appendMessages(bb, append(b, '['), req.Messages)
		req.Memo.Put(h)
		if err != nil {
			return nil, err
		}
		b = append(b, ']')
	} else if req.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range req.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			// The last message is not kept: the loop sends it with a
			// cache breakpoint, a copy made for this request only.
			var (
				kept []byte
				err  error
			)
			if b, kept, err = e.msgs.appendMessage(b, &req.Messages[i], i < len(req.Messages)-1); err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			bb.share(len(b), kept)
		}
		b = append(b, ']')
	}
	if len(req.System) > 0 {
		system, err := e.system.encoded(req.System)
		if err != nil {
			return nil, fmt.Errorf("system: %w", err)
		}
		b = append(b, `,"system":`...)
		bb.share(len(b), system)
	}
	if len(req.Tools) > 0 {
		tools, err := e.tools.encoded(req.Tools)
		if err != nil {
			return nil, fmt.Errorf("tools: %w", err)
		}
		b = append(b, `,"tools":`...)
		bb.share(len(b), tools)
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
