package toolsearch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// definition is a tool as a ToolSearch result shows it to the model: the
// fields of a tool declaration.
type definition struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
}

// Render is the text of a ToolSearch result: a line saying what was
// found, then each match's definition as one line of JSON (the form
// [Loaded] reads back). A search with no match says so and how to search
// again.
func Render(query string, matches []tool.Info, total int) string {
	var b strings.Builder
	if len(matches) == 0 {
		fmt.Fprintf(&b, "No deferred tool matches %q (%d deferred tools). Try other keywords, or %s<name> with a name from the list of deferred tools.", query, total, SelectPrefix)
		return b.String()
	}
	noun := "tools"
	if len(matches) == 1 {
		noun = "tool"
	}
	fmt.Fprintf(&b, "Loaded %d %s (of %d deferred). They are declared from now on; call them like any other tool. Definitions:", len(matches), noun, total)
	for _, m := range matches {
		line, err := defLine(m)
		if err != nil {
			continue // a schema that is not JSON was refused when the session started
		}
		b.WriteByte('\n')
		b.Write(line)
	}
	return b.String()
}

func defLine(in tool.Info) ([]byte, error) {
	d := definition{Name: in.Name, Description: in.Description}
	if len(in.InputSchema) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, in.InputSchema); err != nil {
			return nil, err
		}
		d.InputSchema = buf.Bytes()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Loaded returns the names of the catalog's tools that a ToolSearch
// result in history has loaded: the tool_result blocks answering a
// tool_use of ToolName, read line by line for the definitions Render
// writes. Only names in the catalog count, so nothing else in a result
// can add a tool. A nil catalog loads nothing. The map is nil when
// nothing is loaded; callers only read it.
func Loaded(history []model.Message, c *Catalog) map[string]bool {
	if c.Len() == 0 {
		return nil
	}
	// The loop asks before every request, over the whole history: the
	// blocks are looked at in place, and the maps made at the first call
	// of ToolSearch.
	var calls, loaded map[string]bool
	for i := range history {
		for j := range history[i].Content {
			b := &history[i].Content[j]
			switch {
			case b.Type == model.TypeToolUse && b.Name == ToolName:
				if calls == nil {
					calls, loaded = map[string]bool{}, map[string]bool{}
				}
				calls[b.ID] = true
			case b.Type == model.TypeToolResult && calls[b.ToolUseID]:
				if b.IsError != nil && *b.IsError {
					continue
				}
				text := b.Text
				if b.Sealed() { // the loop keeps these as text; read one anyway
					text = b.ResultText()
				}
				readDefinitions(text, c, loaded)
				for _, inner := range b.Blocks {
					switch inner.Type {
					case model.TypeText:
						readDefinitions(inner.Text, c, loaded)
					case model.TypeToolReference:
						if _, ok := c.Lookup(inner.ToolName); ok {
							loaded[inner.ToolName] = true
						}
					}
				}
			}
		}
	}
	return loaded
}

func readDefinitions(text string, c *Catalog, into map[string]bool) {
	for _, name := range Definitions(text, c) {
		into[name] = true
	}
}

// References is the tool_result content a ToolSearch result becomes for a
// provider that loads deferred tools itself (model.ToolReferencer): one
// tool_reference block per tool whose definition text (from [Render])
// shows, in order. It returns nil when text shows none (a search with no
// match keeps its text).
func References(text string, c *Catalog) []model.Content {
	var out []model.Content
	for _, name := range Definitions(text, c) {
		out = append(out, model.ToolReference(name))
	}
	return out
}

// LoadedText is the text the reference adds after a tool_result of
// tool_reference blocks, in the user message that carries it.
const LoadedText = "Tool loaded."

// Definitions returns the names of the catalog's tools whose definitions
// text shows (as [Render] writes them), in order, each once.
func Definitions(text string, c *Catalog) []string {
	var names []string
	seen := map[string]bool{}
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, `{"name":`) {
			continue
		}
		var d definition
		if json.Unmarshal([]byte(line), &d) == nil && !seen[d.Name] {
			if _, ok := c.Lookup(d.Name); ok {
				seen[d.Name] = true
				names = append(names, d.Name)
			}
		}
	}
	return names
}

// Announcement is the system text that tells the model which tools are
// deferred and how to load them. It lists every deferred tool, loaded or
// not, one [ListLine] each, so that it stays the same for the whole
// session (and the prompt cache with it).
func Announcement(c *Catalog) string {
	c.mu.RLock()
	ann, ver, base := c.ann, c.ver, c.base
	c.mu.RUnlock()
	if ann != nil {
		return *ann
	}
	if base != nil {
		// The base's tools, unchanged: the text every catalog on the base
		// would make, made once for them all.
		if p := base.ann.Load(); p != nil {
			return *p
		}
		text := announce(&Catalog{tools: base.tools, index: base.index}) // not c: a Replace may have begun
		if base.ann.CompareAndSwap(nil, &text) {
			return text
		}
		return *base.ann.Load()
	}
	text := announce(c)
	c.mu.Lock()
	if c.ann == nil && c.ver == ver {
		c.ann = &text
	}
	c.mu.Unlock()
	return text
}

// announce makes the Announcement of c.
func announce(c *Catalog) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Deferred tools: the %d tools named below can be used, but their definitions are not loaded yet. "+
		"Before calling one, load it with the %s tool: query %q loads the tools you name, "+
		"and keywords search the deferred tools' names and descriptions. "+
		"The result shows each tool's definition, and the tool is declared like the others from then on.\n",
		c.Len(), ToolName, SelectPrefix+"<name>[,<name>...]")
	b.WriteString("<deferred-tools>")
	for _, in := range c.Infos() {
		b.WriteByte('\n')
		b.WriteString(ListLine(in))
	}
	b.WriteString("\n</deferred-tools>")
	return b.String()
}

// Note is what a failed call of a deferred tool that was not loaded gets
// appended to its error: the tool's input schema, and how to load it.
func Note(in tool.Info) string {
	schema := "{}"
	if len(in.InputSchema) > 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, in.InputSchema) == nil {
			schema = buf.String()
		}
	}
	return fmt.Sprintf("Note: %s is a deferred tool and its definition was not loaded, so it was called without its schema. "+
		"Its input schema is: %s\nLoad it with %s (query %q) before calling it again.",
		in.Name, schema, ToolName, SelectPrefix+in.Name)
}

// MaxHintChars bounds the search hint shown in a deferred tool's line; a
// longer hint is cut (it still counts whole in searches).
const MaxHintChars = 200

// ListLine is a deferred tool's line in the list of deferred tools: its
// name, then ": " and its search hint when it has one, the hint on one
// line (runs of white space made one space) and at most MaxHintChars
// characters long.
func ListLine(in tool.Info) string {
	hint := strings.Join(strings.Fields(in.SearchHint), " ")
	if hint == "" {
		return in.Name
	}
	if r := []rune(hint); len(r) > MaxHintChars {
		hint = string(r[:MaxHintChars-1]) + "…"
	}
	return in.Name + ": " + hint
}
