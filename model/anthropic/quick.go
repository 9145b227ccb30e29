package anthropic

import "github.com/agentloop/agentloop/internal/quickev"

// The API streams a reply as many small content_block_delta events, one
// every few tokens, all of the same compact shape, and a few events that
// would be decoded twice. Those are read by hand (internal/quickev, which
// the engine shares); this file names the readers as the stream reader and
// its tests use them. What a reader accepts, it reads as encoding/json
// would: quick_test.go compares them with this package's event types.

// quickDelta is a content_block_delta read by [readQuickDelta].
type quickDelta struct {
	index int
	typ   string
	field string
	value string
}

// readQuickDelta is quickev.ReadDelta.
func readQuickDelta(data []byte) (quickDelta, bool) {
	d, ok := quickev.ReadDelta(data)
	return quickDelta{index: d.Index, typ: d.Type, field: d.Field, value: d.Value}, ok
}

// readQuickStop is quickev.ReadStop.
func readQuickStop(data []byte) (int, bool) { return quickev.ReadStop(data) }

// readQuickBlockStart is quickev.ReadBlockStart.
func readQuickBlockStart(data []byte) (int, []byte, bool) { return quickev.ReadBlockStart(data) }

// readQuickType reads the type of an event of one of the kinds handle
// decodes whole anyway (message_start, content_block_start,
// message_delta), so that it is not decoded once more only to learn its
// type (quickev.FirstType). The caller decodes the event, and that fails
// on invalid JSON.
func readQuickType(data []byte) (string, bool) {
	typ, ok := quickev.FirstType(data)
	switch typ {
	case "message_start", "content_block_start", "message_delta":
		return typ, ok
	}
	return "", false
}
