package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentloop/agentloop/model"
)

// LineError reports a transcript line that is not a valid entry.
type LineError struct {
	Path string // file name, or the name given to Parse
	Line int    // 1-based
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("session: %s:%d: malformed transcript line: %v", e.Path, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Transcript is a parsed transcript file.
type Transcript struct {
	// Path is the file the transcript was read from.
	Path string
	// Entries are all valid lines, in file order (blank lines, malformed
	// lines and a truncated final line left out).
	Entries []Entry
	// Chain is the conversation: the entries from the root to Leaf,
	// following parentUuid (see [NewTranscript]).
	Chain []Entry
	// Leaf is the uuid of the chain's last entry: the parentUuid of the
	// next entry appended. "" when the transcript has no conversation.
	Leaf string
	// Cost is the last cost-state entry's content, nil if there is none.
	Cost *CostState
	// Warnings describes, for a person, each line skipped while reading:
	// file:line and what was wrong with it (see [Load]).
	Warnings []string

	// bridge carries the chain across skipped lines (see lines.bridge).
	bridge map[string]string
}

// ErrEmptyTranscript reports a transcript file without a single valid
// entry: there is no conversation to resume.
var ErrEmptyTranscript = errors.New("transcript is empty")

// Load reads a transcript file to resume it. It never modifies the file.
//
// As the reference does, a line that is not a valid entry (not JSON, JSON
// of the wrong shape, a final line cut short by a crash or by a write still
// under way) is skipped and everything else is kept: each skipped line is
// described in Warnings by file:line and what was wrong. The chain is kept
// whole across a skipped conversation entry: the entry after it continues
// from the skipped entry's parent (when the damaged line still shows it)
// or from the last entry before the damage.
//
// A file without a single valid entry (empty, blank, or all lines
// malformed) is an error wrapping [ErrEmptyTranscript]: resuming it would
// silently start a fresh conversation.
func Load(path string) (*Transcript, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	t := parseBytes(data, path)
	t.Path = path
	if len(t.Entries) == 0 {
		why := "it has no lines"
		if len(bytes.TrimSpace(data)) > 0 {
			why = fmt.Sprintf("all its lines are malformed (%s)", strings.Join(t.Warnings, "; "))
		}
		return nil, fmt.Errorf("session: %s: %w, nothing to resume: %s", path, ErrEmptyTranscript, why)
	}
	return t, nil
}

// Parse reads a transcript from r as [Load] does; name is used in
// Warnings. An empty transcript is not an error here.
func Parse(r io.Reader, name string) (*Transcript, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("session: read %s: %w", name, err)
	}
	return parseBytes(data, name), nil
}

func parseBytes(data []byte, name string) *Transcript {
	l := readLines(data, name)
	t := buildTranscript(l.entries, l.bridge)
	t.Warnings = l.warnings
	return t
}

// parseLines splits data into entries strictly: a malformed line is a
// [*LineError], except a final line without a newline, which is skipped
// with a warning. Stores read their files with it.
func parseLines(data []byte, name string) ([]Entry, []string, error) {
	var entries []Entry
	var warnings []string
	for line, l := range nonBlankLines(data) {
		b, last := l.b, l.last
		e, err := ParseEntry(b)
		if err != nil {
			if last {
				warnings = append(warnings, fmt.Sprintf("%s:%d: truncated final line skipped (%d bytes)", name, line, len(b)))
				break
			}
			return nil, nil, &LineError{Path: name, Line: line, Err: errors.New(plainReason(err))}
		}
		entries = append(entries, e)
	}
	return entries, warnings, nil
}

// NewTranscript builds a transcript from entries in file order: it
// rebuilds the conversation chain and finds the last cost state.
//
// The chain is rebuilt as the reference does: among the conversation
// entries with a uuid, the terminal ones (no entry names them as parent)
// are found; from each, the nearest user or assistant entry is its leaf;
// leaves that are not sidechain, team or meta entries (a compaction's
// summary is not counted as meta) are preferred, and
// of those the one latest in the file wins. The chain is the walk from
// that terminal (or, when sidechain entries follow the leaf, from the last
// entry before them) back along parentUuid to the root (logicalParentUuid is not
// followed, so a compaction starts a new chain).
func NewTranscript(entries []Entry) *Transcript {
	return buildTranscript(entries, nil)
}

// chainIndex finds conversation entries by uuid, following bridge over
// uuids whose lines were skipped.
type chainIndex struct {
	idx    map[string]int
	bridge map[string]string
}

func newChainIndex(entries []Entry, bridge map[string]string) chainIndex {
	c := chainIndex{idx: map[string]int{}, bridge: bridge}
	for i, e := range entries {
		if e.UUID == "" || !IsChainType(e.Type) {
			continue
		}
		if _, dup := c.idx[e.UUID]; !dup {
			c.idx[e.UUID] = i
		}
	}
	return c
}

// resolve returns the uuid of the entry that stands for id: id itself, or
// where the bridge leads from a skipped uuid. "" when none does.
func (c chainIndex) resolve(id string) string {
	for range len(c.bridge) + 1 {
		if id == "" {
			return ""
		}
		if _, ok := c.idx[id]; ok {
			return id
		}
		next, ok := c.bridge[id]
		if !ok {
			return ""
		}
		id = next
	}
	return ""
}

// parent returns the index of the entry e continues from.
func (c chainIndex) parent(e Entry) (int, bool) {
	i, ok := c.idx[c.resolve(e.ParentUUID)]
	return i, ok
}

// buildTranscript is NewTranscript with a bridge over skipped lines.
func buildTranscript(entries []Entry, bridge map[string]string) *Transcript {
	t := &Transcript{Entries: entries, bridge: bridge}
	for i := range entries {
		if entries[i].Type == TypeCostState && entries[i].Cost != nil {
			t.Cost = entries[i].Cost
		}
	}
	ci := newChainIndex(entries, bridge)
	hasChild := map[string]bool{}
	var nodes []int
	for i, e := range entries {
		if e.UUID == "" || !IsChainType(e.Type) || ci.idx[e.UUID] != i {
			continue
		}
		nodes = append(nodes, i)
		if p := ci.resolve(e.ParentUUID); p != "" {
			hasChild[p] = true
		}
	}
	best, bestLeaf, bestPreferred := -1, -1, false
	for _, n := range nodes {
		if hasChild[entries[n].UUID] {
			continue
		}
		// Walk back to the nearest user or assistant entry, preferring one
		// that is not a sidechain, meta or team entry; the chain then ends
		// at the last entry before it that is not a sidechain entry.
		raw, pref, end := -1, -1, -1
		seen := map[int]bool{}
		for j := n; j >= 0 && !seen[j]; {
			seen[j] = true
			e := entries[j]
			if end < 0 && !e.IsSidechain {
				end = j
			}
			if e.Type == TypeUser || e.Type == TypeAssistant {
				if raw < 0 {
					raw = j
				}
				// A compaction's summary counts as a conversation entry
				// though it is synthetic: a /compact leaves nothing else
				// after its boundary.
				if !e.IsSidechain && (!e.IsMeta || e.IsCompactSummary) && !hasExtra(e, "teamName") {
					pref = j
					break
				}
			}
			p, ok := ci.parent(e)
			if !ok {
				break
			}
			j = p
		}
		leaf, preferred := pref, pref >= 0
		if !preferred {
			leaf, end = raw, n
		}
		if leaf < 0 {
			continue
		}
		switch {
		case best < 0,
			preferred && !bestPreferred,
			preferred == bestPreferred && (leaf > bestLeaf || leaf == bestLeaf && end > best):
			best, bestLeaf, bestPreferred = end, leaf, preferred
		}
	}
	if best >= 0 {
		t.Chain = walk(entries, ci, best)
		t.Leaf = entries[best].UUID
	}
	return t
}

// walk returns the chain from the root to entries[from].
func walk(entries []Entry, ci chainIndex, from int) []Entry {
	var rev []Entry
	seen := map[int]bool{}
	for j := from; !seen[j]; {
		seen[j] = true
		rev = append(rev, entries[j])
		p, ok := ci.parent(entries[j])
		if !ok {
			break
		}
		j = p
	}
	for i, k := 0, len(rev)-1; i < k; i, k = i+1, k-1 {
		rev[i], rev[k] = rev[k], rev[i]
	}
	return rev
}

func hasExtra(e Entry, k string) bool {
	v, ok := e.Extra[k]
	return ok && string(v) != "null" && string(v) != `""`
}

// SessionID returns the session id recorded in the transcript's entries.
func (t *Transcript) SessionID() string {
	for _, e := range t.Entries {
		if e.SessionID != "" {
			return e.SessionID
		}
	}
	return ""
}

// At returns a copy of the transcript whose chain ends at the entry with
// the given uuid, for resuming a session at an earlier point
// (resumeSessionAt). Entries stay as they are.
func (t *Transcript) At(uuid string) (*Transcript, error) {
	ci := newChainIndex(t.Entries, t.bridge)
	i, ok := ci.idx[uuid]
	if !ok {
		return nil, fmt.Errorf("session: no entry %s in the transcript: %w", uuid, ErrNotFound)
	}
	c := *t
	c.Chain = walk(t.Entries, ci, i)
	c.Leaf = uuid
	return &c, nil
}

// Messages returns the chain's visible messages: the user and assistant
// entries that are not meta or sidechain entries (in a subagent's
// transcript, whose entries are all sidechain entries, every user and
// assistant entry). Compact summaries are included.
func (t *Transcript) Messages() []Entry {
	side := t.sidechainOnly()
	var out []Entry
	for _, e := range t.Chain {
		if (e.Type != TypeUser && e.Type != TypeAssistant) || e.IsMeta || (e.IsSidechain && !side) || hasExtra(e, "teamName") {
			continue
		}
		out = append(out, e)
	}
	return out
}

// sidechainOnly reports whether the chain is a subagent's: its root is a
// sidechain entry.
func (t *Transcript) sidechainOnly() bool {
	return len(t.Chain) > 0 && t.Chain[0].IsSidechain
}

// History returns the messages to send to the API when the session is
// resumed: the chain's user and assistant entries (meta entries included,
// since they were sent), with
//
//   - consecutive assistant entries of one message.id merged back into one
//     message with all its blocks in order (also across the tool results
//     of blocks that ran while the reply streamed), thinking blocks
//     verbatim with their signatures;
//   - consecutive user entries (tool results, prompts) merged into one;
//   - synthetic API-error messages left out;
//   - tool_use blocks without a tool_result in the next message, and
//     tool_results without their tool_use, left out, so that a session
//     that stopped in the middle of a tool round can continue;
//   - assistant messages left with only thinking, or empty text, dropped,
//     and the remaining messages merged again so that roles alternate.
//
// The history may end with a user message (a turn that ended without a
// reply); add the next prompt with [AppendUser].
func (t *Transcript) History() []model.Message {
	side := t.sidechainOnly()
	var out []model.Message
	var ids []string // message.id of each assistant message in out
	for _, e := range t.Chain {
		if e.Message == nil || (e.IsSidechain && !side) {
			continue
		}
		switch e.Type {
		case TypeUser:
			blocks := cloneContents(e.Message.Content)
			if len(blocks) == 0 {
				continue
			}
			if n := len(out); n > 0 && out[n-1].Role == "user" {
				markerNewline(out[n-1].Content)
				out[n-1].Content = append(out[n-1].Content, blocks...)
				continue
			}
			out = append(out, model.Message{Role: "user", Content: blocks})
			ids = append(ids, "")
		case TypeAssistant:
			if e.IsAPIErrorMessage || e.Message.Model == "<synthetic>" && !isNoResponse(e.Message.Content) {
				continue
			}
			blocks := cloneContents(e.Message.Content)
			if len(blocks) == 0 {
				continue
			}
			id := e.Message.ID
			if k := replyIndex(out, ids, id); k >= 0 {
				out[k].Content = append(out[k].Content, blocks...)
				continue
			}
			if n := len(out); n > 0 && out[n-1].Role == "assistant" {
				out[n-1].Content = append(out[n-1].Content, blocks...)
				ids[n-1] = id
				continue
			}
			out = append(out, model.Message{Role: "assistant", Content: blocks})
			ids = append(ids, id)
		}
	}
	return tidy(out)
}

// replyIndex finds the assistant message of reply id that the next block
// of that reply belongs to: the last message, or the message before a run
// of user messages holding only tool results. It returns -1 when there is
// none.
func replyIndex(out []model.Message, ids []string, id string) int {
	if id == "" {
		return -1
	}
	for k := len(out) - 1; k >= 0; k-- {
		if out[k].Role == "assistant" {
			if ids[k] == id {
				return k
			}
			return -1
		}
		for _, c := range out[k].Content {
			if c.Type != model.TypeToolResult {
				return -1
			}
		}
	}
	return -1
}

// tidy pairs tool uses with results, drops what the API would reject and
// merges messages of the same role.
func tidy(msgs []model.Message) []model.Message {
	answered := map[string]bool{} // tool_use ids with a result in the next message
	for i, m := range msgs {
		if m.Role != "assistant" || i+1 >= len(msgs) || msgs[i+1].Role != "user" {
			continue
		}
		uses := map[string]bool{}
		for _, c := range m.Content {
			if c.Type == model.TypeToolUse {
				uses[c.ID] = true
			}
		}
		for _, c := range msgs[i+1].Content {
			if c.Type == model.TypeToolResult && uses[c.ToolUseID] {
				answered[c.ToolUseID] = true
			}
		}
	}
	usedIDs := map[string]bool{}
	resultIDs := map[string]bool{}
	var prevUses map[string]bool
	var out []model.Message
	for _, m := range msgs {
		var keep []model.Content
		uses := map[string]bool{}
		for _, c := range m.Content {
			switch {
			case m.Role == "assistant" && c.Type == model.TypeToolUse:
				if !answered[c.ID] || usedIDs[c.ID] {
					continue
				}
				usedIDs[c.ID] = true
				uses[c.ID] = true
			case m.Role == "assistant" && c.Type == model.TypeText && strings.TrimSpace(c.Text) == "":
				continue
			case m.Role == "user" && c.Type == model.TypeToolResult:
				if !prevUses[c.ToolUseID] || resultIDs[c.ToolUseID] {
					continue
				}
				resultIDs[c.ToolUseID] = true
			}
			keep = append(keep, c)
		}
		if m.Role == "assistant" {
			prevUses = uses
		} else {
			prevUses = nil
		}
		if len(keep) == 0 || (m.Role == "assistant" && onlyThinking(keep)) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Content = append(out[n-1].Content, keep...)
			continue
		}
		out = append(out, model.Message{Role: m.Role, Content: keep})
	}
	return out
}

func onlyThinking(cs []model.Content) bool {
	for _, c := range cs {
		if c.Type != model.TypeThinking && c.Type != model.TypeRedactedThinking {
			return false
		}
	}
	return true
}

// AppendUser adds a user turn to a history: to its last message when that
// is a user message, as a new message otherwise.
func AppendUser(history []model.Message, content ...model.Content) []model.Message {
	if n := len(history); n > 0 && history[n-1].Role == "user" {
		last := history[n-1]
		last.Content = append(append([]model.Content(nil), last.Content...), content...)
		out := append([]model.Message(nil), history[:n-1]...)
		return append(out, last)
	}
	return append(history, model.Message{Role: "user", Content: content})
}

// ErrNotFound reports a session, entry or store key that does not exist.
var ErrNotFound = errors.New("session not found")

// The texts of an interrupt, as the engine writes them: the marker lines
// that end an interrupted run, and the synthetic assistant turn that
// answers the marker when the conversation is resumed.
const (
	interruptMarker     = "[Request interrupted by user]"
	interruptToolMarker = "[Request interrupted by user for tool use]"
	noResponse          = "No response requested."
)

// markerNewline ends a marker that is the last block of a user message
// with a newline, as the reference sends it when more user content joins
// the message.
func markerNewline(c []model.Content) {
	if n := len(c); n > 0 && c[n-1].Type == model.TypeText && (c[n-1].Text == interruptMarker || c[n-1].Text == interruptToolMarker) {
		c[n-1].Text += "\n"
	}
}

// isNoResponse reports whether c is the synthetic answer to a marker,
// which the history keeps (other synthetic assistant lines are left out).
func isNoResponse(c []model.Content) bool {
	return len(c) == 1 && c[0].Type == model.TypeText && c[0].Text == noResponse
}
