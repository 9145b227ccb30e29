package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/agentloop/agentloop/model"
)

// maxMRUEntries bounds each mru: a process whose sessions send more
// distinct system prompts (or tool lists) than this at once encodes some
// of them every turn.
const maxMRUEntries = 16

// mru keeps the JSON of the values of one request field (the system
// prompt, the tools) encoded lately, most recently used first. An entry
// holds its own deep copy of the value, so a caller changing the value
// afterwards cannot make it serve stale bytes: a value is served only when
// it equals, field by field, the one that was encoded. Strings the two
// share compare in constant time. The zero value is ready; it is safe for
// concurrent use.
type mru[T any, F field[T]] struct {
	mu      sync.Mutex
	entries []mruEntry[T]
}

type mruEntry[T any] struct {
	v    T
	json []byte // never modified
}

// field is what an mru needs to know of the values it keeps; its
// implementations are empty structs.
type field[T any] interface {
	// cacheable reports whether v can be compared reliably.
	cacheable(v T) bool
	same(a, b T) bool
	deepCopy(v T) T
	encode(v T) ([]byte, error)
}

// encoded returns v's JSON. The result must not be modified.
func (c *mru[T, F]) encoded(v T) ([]byte, error) {
	var f F
	if !f.cacheable(v) {
		return f.encode(v)
	}
	c.mu.Lock()
	for i, e := range c.entries {
		if f.same(e.v, v) {
			copy(c.entries[1:i+1], c.entries[:i]) // move to the front
			c.entries[0] = e
			c.mu.Unlock()
			return e.json, nil
		}
	}
	c.mu.Unlock()
	b, err := f.encode(v)
	if err != nil {
		return nil, err
	}
	own := f.deepCopy(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries = slices.Insert(c.entries, 0, mruEntry[T]{v: own, json: b})
	if len(c.entries) > maxMRUEntries {
		c.entries[maxMRUEntries] = mruEntry[T]{}
		c.entries = c.entries[:maxMRUEntries]
	}
	return b, nil
}

// systemField is the system prompt: a list of blocks.
type systemField struct{}

func (systemField) cacheable([]model.Content) bool             { return true }
func (systemField) same(a, b []model.Content) bool             { return sameContents(a, b) }
func (systemField) deepCopy(v []model.Content) []model.Content { return deepCopy(v) }

func (systemField) encode(v []model.Content) ([]byte, error) {
	b := []byte{'['}
	for i := range v {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = v[i].AppendJSON(b); err != nil {
			return nil, fmt.Errorf("block %d: %w", i, err)
		}
	}
	return append(b, ']'), nil
}

// toolsField is the tool definitions. Lists with Extra fields are not
// kept: Extra's values could change in place without a trace.
type toolsField struct{}

func (toolsField) cacheable(v []model.ToolDef) bool {
	for i := range v {
		if len(v[i].Extra) > 0 {
			return false
		}
	}
	return true
}

// same reports whether two lists without Extra fields encode alike.
func (toolsField) same(a, b []model.ToolDef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Name != y.Name || x.Description != y.Description || x.Type != y.Type ||
			x.DeferLoading != y.DeferLoading || len(y.Extra) > 0 || !bytes.Equal(x.InputSchema, y.InputSchema) {
			return false
		}
	}
	return true
}

func (toolsField) deepCopy(v []model.ToolDef) []model.ToolDef {
	own := slices.Clone(v)
	for i := range own {
		own[i].InputSchema = slices.Clone(own[i].InputSchema)
	}
	return own
}

func (toolsField) encode(v []model.ToolDef) ([]byte, error) { return json.Marshal(v) }
