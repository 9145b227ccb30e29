package compact

import (
	"encoding/json"
	"sync"

	"github.com/agentloop/agentloop/model"
)

// Estimate is the estimated size of msgs in tokens: a quarter of the bytes
// of their JSON, and at least 1 for a non-empty list.
func Estimate(msgs []model.Message) int64 {
	if len(msgs) == 0 {
		return 0
	}
	var n int64
	bp := sizeBufs.Get().(*[]byte)
	buf := (*bp)[:0]
	for i := range msgs {
		var size int64
		size, buf = messageSize(&msgs[i], buf[:0])
		n += size
	}
	if cap(buf) <= maxSizeBuf {
		*bp = buf
		sizeBufs.Put(bp)
	}
	return max(n/4, 1)
}

// sizeBufs are the scratch buffers Estimate encodes into; a buffer that
// grew past maxSizeBuf (a very large message) is left to the collector.
var sizeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxSizeBuf = 1 << 20

// messageSize is the size of m's JSON, written into buf (returned for
// reuse) by the model's own encoder; a message it cannot encode is
// measured by messageBytes.
func messageSize(m *model.Message, buf []byte) (int64, []byte) {
	b, err := m.AppendJSON(buf)
	if err != nil {
		return messageBytes(*m), buf
	}
	return int64(len(b)), b
}

// messageBytes is the size of m's JSON. A block that does not encode
// cannot be sent either; its text is counted, so the estimate errs on the
// large side.
func messageBytes(m model.Message) int64 {
	b, err := json.Marshal(m)
	if err == nil {
		return int64(len(b))
	}
	var n int64
	for _, c := range m.Content {
		n += int64(len(c.Text) + len(c.Input))
	}
	return n
}

// UpperBound is a bound on Estimate(msgs) that reads only lengths: no
// string is escaped. JSON escaping writes at most six bytes for one (a
// control character as \u00XX), so a block's JSON is at most its framing
// plus six times the bytes of its strings and raw values. A caller that
// only compares the estimate with a threshold far above asks this first,
// and encodes nothing in the common case.
func UpperBound(msgs []model.Message) int64 {
	if len(msgs) == 0 {
		return 0
	}
	var n int64
	for i := range msgs {
		n += msgFrame + int64(len(msgs[i].Role))*6 + blocksBound(msgs[i].Content)
	}
	return max(n/4+1, 1)
}

// msgFrame and blockFrame bound the bytes of a message's and a block's
// JSON besides their values: the keys, quotes, colons, commas and
// brackets, the literals (true, false, null) and numbers.
const msgFrame, blockFrame = 64, 512

func blocksBound(bs []model.Content) int64 {
	var n int64
	for i := range bs {
		b := &bs[i]
		v := len(b.Type) + len(b.Text) + len(b.Thinking) + len(b.Signature) + len(b.Data) + len(b.ID) + len(b.Name) +
			len(b.Input) + len(b.ToolUseID) + len(b.ToolName) + len(b.Raw)
		if c := b.CacheControl; c != nil {
			v += len(c.Type) + len(c.TTL)
		}
		if src := b.Source; src != nil {
			v += len(src.Type) + len(src.MediaType) + len(src.Data) + len(src.URL)
		}
		n += blockFrame + 6*int64(v) + blocksBound(b.Blocks)
	}
	return n
}

// Due reports whether a request would pass threshold. base is the context
// the API reported for the latest reply (input, cache and output tokens of
// its usage; 0 when there is none), and added are the messages that
// entered the history after that reply (the whole history when there is no
// reply to count from), estimated with [Estimate]. A threshold ≤ 0 is never
// passed.
func Due(base int64, added []model.Message, threshold int64) bool {
	if threshold <= 0 || base+UpperBound(added) <= threshold {
		return false
	}
	return base+Estimate(added) > threshold
}
