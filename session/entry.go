package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// Entry types this package writes or reads field by field. Lines of any
// other type (attachment, queue-operation, api-request, mode, …) are kept
// with their JSON in [Entry.Raw].
const (
	TypeUser        = "user"
	TypeAssistant   = "assistant"
	TypeSystem      = "system"
	TypeAttachment  = "attachment"
	TypeProgress    = "progress"
	TypeSummary     = "summary"
	TypeCustomTitle = "custom-title"
	TypeAITitle     = "ai-title"
	TypeTag         = "tag"
	TypeLastPrompt  = "last-prompt"
	TypeCostState   = "cost-state"
)

// System entry subtypes.
const (
	SubtypeAPIError        = "api_error"
	SubtypeCompactBoundary = "compact_boundary"
)

// modelled reports whether Entry models the fields of entries of type t;
// lines of other types keep their JSON in Raw.
func modelled(t string) bool {
	switch t {
	case TypeUser, TypeAssistant, TypeSystem, TypeSummary, TypeCustomTitle, TypeAITitle, TypeTag,
		TypeLastPrompt, TypeCostState:
		return true
	}
	return false
}

// IsChainType reports whether entries of type t are conversation entries:
// they carry uuid and parentUuid and form the chain a transcript is rebuilt
// from.
func IsChainType(t string) bool {
	switch t {
	case TypeUser, TypeAssistant, TypeSystem, TypeAttachment, TypeProgress:
		return true
	}
	return false
}

// Entry is one line of a transcript.
//
// Only the fields meaningful for its Type are set. Conversation entries
// (user, assistant, system, attachment, progress) carry the envelope: UUID,
// ParentUUID, IsSidechain, Timestamp, SessionID, Cwd, Version, GitBranch,
// UserType and Entrypoint. Metadata entries (last-prompt, cost-state,
// custom-title, tag, summary, …) are not part of the chain.
//
// Fields of the line that no struct field models are kept in Extra and
// written back. Lines of types this package does not model keep the line
// itself in Raw, which is written back verbatim; clear Raw after changing
// such an entry's fields so that they are written instead.
type Entry struct {
	Type string

	UUID string
	// ParentUUID is the previous entry of the chain; "" is the root (null
	// in JSON).
	ParentUUID string
	// LogicalParentUUID links a compact boundary to the entry before the
	// compaction. It is not followed when rebuilding the chain.
	LogicalParentUUID string
	IsSidechain       bool
	Timestamp         string // ISO 8601 with milliseconds, UTC
	SessionID         string
	Cwd               string
	Version           string
	GitBranch         string
	UserType          string
	Entrypoint        string
	AgentID           string

	// Message is the API message of a user or assistant entry.
	Message *Message

	IsMeta                  bool
	IsCompactSummary        bool
	IsAPIErrorMessage       bool
	PermissionMode          string
	RequestID               string
	ToolUseResult           json.RawMessage
	SourceToolAssistantUUID string
	ForkedFrom              *ForkedFrom

	// Subtype and Level of a system entry.
	Subtype string
	Level   string

	// Metadata entries.
	Summary     string // summary
	LeafUUID    string // summary, last-prompt
	CustomTitle string // custom-title
	AITitle     string // ai-title
	LastPrompt  string // last-prompt
	Tag         string // tag ("" clears the tag)

	// Cost is the content of a cost-state entry.
	Cost *CostState

	// Extra holds the line's other fields, verbatim.
	Extra map[string]json.RawMessage
	// Raw is the whole line of an entry whose type is not modelled.
	Raw json.RawMessage
}

// Message is the API message of a user or assistant entry. Assistant
// entries carry one content block each; the entries of one reply share ID.
type Message struct {
	ID    string // assistant
	Type  string // "message" on assistant messages
	Role  string
	Model string // assistant
	// Content is the message's blocks. A prompt is written as a plain
	// string when StringContent is set and Content is one text block.
	Content       []model.Content
	StringContent bool
	StopReason    *string // assistant; null when absent
	StopSequence  *string // assistant; null when absent
	// Usage is the API usage object, kept verbatim.
	Usage json.RawMessage
	// Extra holds the message's other fields, verbatim.
	Extra map[string]json.RawMessage
}

// ForkedFrom records where a forked entry came from.
type ForkedFrom struct {
	SessionID   string `json:"sessionId"`
	MessageUUID string `json:"messageUuid"`
}

// CostState is the content of a cost-state entry: the session's running
// totals, restored when the session is resumed. Durations are in
// milliseconds.
type CostState struct {
	TotalCostUSD                   float64                       `json:"totalCostUSD"`
	TotalAPIDuration               float64                       `json:"totalAPIDuration"`
	TotalAPIDurationWithoutRetries float64                       `json:"totalAPIDurationWithoutRetries"`
	TotalToolDuration              float64                       `json:"totalToolDuration"`
	TotalLinesAdded                int64                         `json:"totalLinesAdded"`
	TotalLinesRemoved              int64                         `json:"totalLinesRemoved"`
	TotalDuration                  float64                       `json:"totalDuration"`
	StartTime                      int64                         `json:"startTime"` // Unix milliseconds
	ModelUsage                     map[string]message.ModelUsage `json:"modelUsage"`
	HasUnknownModelCost            bool                          `json:"hasUnknownModelCost"`
}

// costModelUsage is message.ModelUsage as a cost-state entry writes it:
// the fields the reference leaves out there are omitted when zero.
type costModelUsage struct {
	InputTokens                        int64   `json:"inputTokens"`
	OutputTokens                       int64   `json:"outputTokens"`
	CacheReadInputTokens               int64   `json:"cacheReadInputTokens"`
	CacheCreationInputTokens           int64   `json:"cacheCreationInputTokens"`
	WebSearchRequests                  int64   `json:"webSearchRequests"`
	CostUSD                            float64 `json:"costUSD"`
	ContextWindow                      int64   `json:"contextWindow,omitempty"`
	MaxOutputTokens                    int64   `json:"maxOutputTokens,omitempty"`
	ThinkingTokens                     int64   `json:"thinkingTokens"`
	CacheCreationEphemeral5mInputToken int64   `json:"cacheCreationEphemeral5mInputTokens"`
	CacheCreationEphemeral1hInputToken int64   `json:"cacheCreationEphemeral1hInputTokens"`
	CanonicalModel                     string  `json:"canonicalModel,omitempty"`
	Provider                           string  `json:"provider,omitempty"`
	CostBasis                          string  `json:"costBasis,omitempty"`
	CostUnknown                        bool    `json:"costUnknown,omitempty"`
}

// costKeys are the JSON keys of CostState.
var costKeys = []string{"totalCostUSD", "totalAPIDuration", "totalAPIDurationWithoutRetries",
	"totalToolDuration", "totalLinesAdded", "totalLinesRemoved", "totalDuration", "startTime",
	"modelUsage", "hasUnknownModelCost"}

// ParseEntry reads one transcript line. The line must be a JSON object with
// a non-empty string type field.
func ParseEntry(line []byte) (Entry, error) {
	var e Entry
	err := e.UnmarshalJSON(line)
	return e, err
}

// UnmarshalJSON reads a transcript line.
func (e *Entry) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return errors.New("not a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*e = Entry{}
	var typ any
	if err := json.Unmarshal(m["type"], &typ); err != nil || typ == nil {
		return errors.New("missing type field")
	}
	t, ok := typ.(string)
	if !ok || t == "" {
		return errors.New("type field is not a non-empty string")
	}
	e.Type = t
	delete(m, "type")

	takeString(m, "uuid", &e.UUID)
	takeString(m, "parentUuid", &e.ParentUUID)
	takeString(m, "logicalParentUuid", &e.LogicalParentUUID)
	takeBool(m, "isSidechain", &e.IsSidechain)
	takeString(m, "timestamp", &e.Timestamp)
	takeString(m, "sessionId", &e.SessionID)
	takeString(m, "cwd", &e.Cwd)
	takeString(m, "version", &e.Version)
	takeString(m, "gitBranch", &e.GitBranch)
	takeString(m, "userType", &e.UserType)
	takeString(m, "entrypoint", &e.Entrypoint)
	takeString(m, "agentId", &e.AgentID)
	takeBool(m, "isMeta", &e.IsMeta)
	takeBool(m, "isCompactSummary", &e.IsCompactSummary)
	takeBool(m, "isApiErrorMessage", &e.IsAPIErrorMessage)
	takeString(m, "permissionMode", &e.PermissionMode)
	takeString(m, "requestId", &e.RequestID)
	takeString(m, "sourceToolAssistantUUID", &e.SourceToolAssistantUUID)
	takeString(m, "subtype", &e.Subtype)
	takeString(m, "level", &e.Level)
	takeString(m, "leafUuid", &e.LeafUUID)
	takeString(m, "customTitle", &e.CustomTitle)
	takeString(m, "aiTitle", &e.AITitle)
	takeString(m, "lastPrompt", &e.LastPrompt)
	if v, ok := m["forkedFrom"]; ok {
		var f ForkedFrom
		if json.Unmarshal(v, &f) == nil && string(v) != "null" {
			e.ForkedFrom = &f
			delete(m, "forkedFrom")
		}
	}
	if v, ok := m["toolUseResult"]; ok {
		e.ToolUseResult = compact(v)
		delete(m, "toolUseResult")
	}
	switch e.Type {
	case TypeUser, TypeAssistant:
		if v, ok := m["message"]; ok && string(v) != "null" {
			var msg Message
			if err := msg.UnmarshalJSON(v); err != nil {
				return fmt.Errorf("%s message: %w", e.Type, err)
			}
			e.Message = &msg
			delete(m, "message")
		}
	case TypeSummary:
		takeString(m, "summary", &e.Summary)
	case TypeTag:
		takeString(m, "tag", &e.Tag)
	case TypeCostState:
		e.Cost = takeCost(m)
	}
	e.Extra = extra(m)
	if !modelled(e.Type) {
		e.Raw = append(json.RawMessage(nil), b...)
	}
	return nil
}

// takeCost moves the cost fields of m into a CostState, unless they do not
// have the expected types, in which case they stay in m.
func takeCost(m map[string]json.RawMessage) *CostState {
	sub := map[string]json.RawMessage{}
	for _, k := range costKeys {
		if v, ok := m[k]; ok {
			sub[k] = v
		}
	}
	b, err := json.Marshal(sub)
	if err != nil {
		return nil
	}
	var c CostState
	if err := json.Unmarshal(b, &c); err != nil {
		return nil
	}
	for _, k := range costKeys {
		delete(m, k)
	}
	return &c
}

// takeString moves m[k] into dst when it is a string or null.
func takeString(m map[string]json.RawMessage, k string, dst *string) {
	v, ok := m[k]
	if !ok {
		return
	}
	var p *string
	if json.Unmarshal(v, &p) != nil {
		return
	}
	if p != nil {
		*dst = *p
	}
	delete(m, k)
}

// takeBool moves m[k] into dst when it is a boolean or null.
func takeBool(m map[string]json.RawMessage, k string, dst *bool) {
	v, ok := m[k]
	if !ok {
		return
	}
	var p *bool
	if json.Unmarshal(v, &p) != nil {
		return
	}
	if p != nil {
		*dst = *p
	}
	delete(m, k)
}

// extra returns the remaining fields, compacted, or nil when there are none.
func extra(m map[string]json.RawMessage) map[string]json.RawMessage {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = compact(v)
	}
	return out
}

// compact returns v without insignificant whitespace (v itself when it is
// not valid JSON).
func compact(v json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return append(json.RawMessage(nil), v...)
	}
	return buf.Bytes()
}

// MarshalJSON writes the entry as one transcript line (without the
// newline). Unlike json.Marshal, it leaves <, > and & unescaped, as the
// reference does, and writes Raw verbatim.
func (e Entry) MarshalJSON() ([]byte, error) { return e.marshal() }

// marshal is MarshalJSON without the copy of e a value receiver takes: a
// transcript's lines are written deep in a turn's stack (see
// Writer.writeOne), where an Entry's copy would add to the stack every
// session's goroutine grows to.
func (e *Entry) marshal() ([]byte, error) {
	if len(e.Raw) > 0 {
		if !json.Valid(e.Raw) {
			return nil, errors.New("session: entry's Raw is not valid JSON")
		}
		return compact(e.Raw), nil
	}
	if e.Type == "" {
		return nil, errors.New("session: entry without type")
	}
	var o object
	chain := IsChainType(e.Type)
	if chain {
		if e.ParentUUID == "" {
			o.add("parentUuid", nil)
		} else {
			o.str("parentUuid", e.ParentUUID)
		}
		o.addString("logicalParentUuid", e.LogicalParentUUID)
		o.boolean("isSidechain", e.IsSidechain)
	} else {
		o.addString("parentUuid", e.ParentUUID)
		o.addString("logicalParentUuid", e.LogicalParentUUID)
		if e.IsSidechain {
			o.boolean("isSidechain", true)
		}
	}
	o.addString("agentId", e.AgentID)
	o.str("type", e.Type)
	o.addString("subtype", e.Subtype)
	o.addString("level", e.Level)
	if e.Message != nil {
		o.add("message", e.Message)
	}
	if e.Type == TypeSummary || e.Summary != "" {
		o.str("summary", e.Summary)
	}
	if e.Type == TypeCustomTitle || e.CustomTitle != "" {
		o.str("customTitle", e.CustomTitle)
	}
	if e.Type == TypeAITitle || e.AITitle != "" {
		o.str("aiTitle", e.AITitle)
	}
	if e.Type == TypeLastPrompt || e.LastPrompt != "" {
		o.str("lastPrompt", e.LastPrompt)
	}
	o.addString("leafUuid", e.LeafUUID)
	if e.Type == TypeTag || e.Tag != "" {
		o.str("tag", e.Tag)
	}
	if e.Cost != nil {
		c := e.Cost
		mu := map[string]costModelUsage{}
		for k, v := range c.ModelUsage {
			mu[k] = costModelUsage(v)
		}
		o.add("totalCostUSD", c.TotalCostUSD)
		o.add("totalAPIDuration", c.TotalAPIDuration)
		o.add("totalAPIDurationWithoutRetries", c.TotalAPIDurationWithoutRetries)
		o.add("totalToolDuration", c.TotalToolDuration)
		o.add("totalLinesAdded", c.TotalLinesAdded)
		o.add("totalLinesRemoved", c.TotalLinesRemoved)
		o.add("totalDuration", c.TotalDuration)
		o.add("startTime", c.StartTime)
		o.add("modelUsage", mu)
		o.add("hasUnknownModelCost", c.HasUnknownModelCost)
	}
	if e.IsMeta {
		o.boolean("isMeta", true)
	}
	if e.IsCompactSummary {
		o.boolean("isCompactSummary", true)
	}
	if e.IsAPIErrorMessage {
		o.boolean("isApiErrorMessage", true)
	}
	o.addString("requestId", e.RequestID)
	o.addString("uuid", e.UUID)
	o.addString("timestamp", e.Timestamp)
	o.addString("permissionMode", e.PermissionMode)
	if len(e.ToolUseResult) > 0 {
		o.raw("toolUseResult", e.ToolUseResult)
	}
	o.addString("sourceToolAssistantUUID", e.SourceToolAssistantUUID)
	if e.ForkedFrom != nil {
		o.add("forkedFrom", e.ForkedFrom)
	}
	// The envelope's tail is written after the extra fields, as the
	// reference does; a typed value that is set wins over an extra one.
	o.addExtra(e.Extra, map[string]bool{"userType": e.UserType != "", "entrypoint": e.Entrypoint != "",
		"cwd": e.Cwd != "", "sessionId": e.SessionID != "", "version": e.Version != "",
		"gitBranch": e.GitBranch != ""})
	if chain {
		o.str("userType", e.UserType)
		o.str("entrypoint", e.Entrypoint)
		o.str("cwd", e.Cwd)
		o.str("sessionId", e.SessionID)
		o.str("version", e.Version)
		o.str("gitBranch", e.GitBranch)
	} else {
		o.addString("userType", e.UserType)
		o.addString("entrypoint", e.Entrypoint)
		o.addString("cwd", e.Cwd)
		o.addString("sessionId", e.SessionID)
		o.addString("version", e.Version)
		o.addString("gitBranch", e.GitBranch)
	}
	return o.bytes()
}

// UnmarshalJSON reads an entry's message.
func (m *Message) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		return errors.New("not a JSON object")
	}
	*m = Message{}
	takeString(raw, "id", &m.ID)
	takeString(raw, "type", &m.Type)
	takeString(raw, "role", &m.Role)
	takeString(raw, "model", &m.Model)
	if v, ok := raw["content"]; ok {
		switch {
		case len(v) > 0 && v[0] == '"':
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("content: %w", err)
			}
			m.Content = []model.Content{model.TextBlock(s)}
			m.StringContent = true
		case string(v) == "null":
		default:
			if err := json.Unmarshal(v, &m.Content); err != nil {
				return fmt.Errorf("content: %w", err)
			}
		}
		delete(raw, "content")
	}
	for _, k := range []string{"stop_reason", "stop_sequence"} {
		v, ok := raw[k]
		if !ok {
			continue
		}
		var p *string
		if json.Unmarshal(v, &p) != nil {
			continue
		}
		if k == "stop_reason" {
			m.StopReason = p
		} else {
			m.StopSequence = p
		}
		delete(raw, k)
	}
	if v, ok := raw["usage"]; ok && string(v) != "null" {
		m.Usage = compact(v)
		delete(raw, "usage")
	}
	m.Extra = extra(raw)
	return nil
}

// MarshalJSON writes the message in the transcript's format: assistant
// messages with id, type, role, model, content, stop_reason, stop_sequence
// and usage; user messages with role and content.
func (m Message) MarshalJSON() ([]byte, error) {
	var o object
	assistant := m.Role == "assistant"
	if assistant {
		o.str("id", m.ID)
		o.str("type", orDefault(m.Type, "message"))
	} else {
		o.addString("id", m.ID)
		o.addString("type", m.Type)
	}
	o.str("role", m.Role)
	if assistant {
		o.str("model", m.Model)
	} else {
		o.addString("model", m.Model)
	}
	switch {
	case m.StringContent && len(m.Content) == 1 && m.Content[0].Type == model.TypeText && m.Content[0].CacheControl == nil:
		o.str("content", m.Content[0].Text)
	case m.Content == nil:
		o.contents("content", []model.Content{})
	default:
		o.contents("content", m.Content)
	}
	if assistant || m.StopReason != nil {
		o.add("stop_reason", m.StopReason)
	}
	if assistant || m.StopSequence != nil {
		o.add("stop_sequence", m.StopSequence)
	}
	if len(m.Usage) > 0 {
		o.raw("usage", m.Usage)
	}
	o.addExtra(m.Extra, nil)
	return o.bytes()
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// object builds a JSON object with keys in insertion order, values
// written as a json.Encoder with SetEscapeHTML(false) writes them. The
// typed adders (str, boolean, raw, contents) and add's common cases write
// the value directly; other values go through the encoder.
type object struct {
	buf  []byte
	keys []string
	err  error
}

// begin writes k's separator and name, unless k is written already or an
// earlier field failed; mark is where the field starts.
func (o *object) begin(k string) (mark int, ok bool) {
	if o.err != nil || slices.Contains(o.keys, k) {
		return 0, false
	}
	mark = len(o.buf)
	if mark == 0 {
		if o.buf == nil {
			o.buf = make([]byte, 0, 512)
			o.keys = make([]string, 0, 24)
		}
		o.buf = append(o.buf, '{')
	} else {
		o.buf = append(o.buf, ',')
	}
	o.buf = model.AppendString(o.buf, k)
	return mark, true
}

// end records k once its value is written, or takes the field back and
// keeps err.
func (o *object) end(k string, mark int, err error) {
	if err != nil {
		o.buf = o.buf[:mark]
		o.err = fmt.Errorf("field %s: %w", k, err)
		return
	}
	o.keys = append(o.keys, k)
}

func (o *object) add(k string, v any) {
	if mark, ok := o.begin(k); ok {
		var err error
		o.buf, err = appendValue(append(o.buf, ':'), v)
		o.end(k, mark, err)
	}
}

func (o *object) str(k, v string) {
	if mark, ok := o.begin(k); ok {
		o.buf = model.AppendStringKeepHTML(append(o.buf, ':'), v)
		o.end(k, mark, nil)
	}
}

func (o *object) boolean(k string, v bool) {
	if mark, ok := o.begin(k); ok {
		o.buf = appendBool(append(o.buf, ':'), v)
		o.end(k, mark, nil)
	}
}

func (o *object) raw(k string, v json.RawMessage) {
	if mark, ok := o.begin(k); ok {
		var err error
		o.buf, err = appendRawJSON(append(o.buf, ':'), v)
		o.end(k, mark, err)
	}
}

func (o *object) contents(k string, v []model.Content) {
	if mark, ok := o.begin(k); ok {
		var err error
		o.buf, err = appendContents(append(o.buf, ':'), v)
		o.end(k, mark, err)
	}
}

// appendValue appends v's JSON as add writes it.
func appendValue(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case string:
		return model.AppendStringKeepHTML(dst, x), nil
	case bool:
		return appendBool(dst, x), nil
	case *string:
		if x == nil {
			return append(dst, "null"...), nil
		}
		return model.AppendStringKeepHTML(dst, *x), nil
	case json.RawMessage:
		return appendRawJSON(dst, x)
	case []model.Content:
		return appendContents(dst, x)
	case *Message:
		if x == nil {
			return append(dst, "null"...), nil
		}
		b, err := x.MarshalJSON()
		if err != nil {
			return dst, err
		}
		return append(dst, b...), nil
	}
	return appendEncoded(dst, v)
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// appendRawJSON appends raw JSON compacted (null for nil); it fails where the
// JSON is not valid.
func appendRawJSON(dst []byte, x json.RawMessage) ([]byte, error) {
	if x == nil {
		return append(dst, "null"...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, x); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}

// appendContents appends blocks as an array of what each block's
// MarshalJSON writes (compact already); null for nil.
func appendContents(dst []byte, x []model.Content) ([]byte, error) {
	if x == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i := range x {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = x[i].AppendJSON(dst); err != nil {
			return dst, fmt.Errorf("block %d: %w", i, err)
		}
	}
	return append(dst, ']'), nil
}

// appendEncoded appends v as a json.Encoder without HTML escaping writes
// it, less the newline.
func appendEncoded(dst []byte, v any) ([]byte, error) {
	var vbuf bytes.Buffer
	enc := json.NewEncoder(&vbuf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return append(dst, bytes.TrimSuffix(vbuf.Bytes(), []byte{'\n'})...), nil
}

// addString adds a string field unless it is empty.
func (o *object) addString(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

// addExtra adds the fields of x not written yet, in key order, leaving out
// the keys in skip.
func (o *object) addExtra(x map[string]json.RawMessage, skip map[string]bool) {
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if v := x[k]; len(v) > 0 && !skip[k] {
			o.raw(k, v)
		}
	}
}

func (o *object) bytes() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	if len(o.buf) == 0 {
		return []byte("{}"), nil
	}
	return append(o.buf, '}'), nil
}

// Clone returns a deep copy of e.
func (e Entry) Clone() Entry {
	var c Entry
	e.cloneTo(&c)
	return c
}

// cloneTo is Clone into *c, without the copies of a value receiver and a
// result (see marshal).
func (e *Entry) cloneTo(c *Entry) {
	*c = *e
	c.ToolUseResult = cloneRaw(e.ToolUseResult)
	c.Raw = cloneRaw(e.Raw)
	c.Extra = cloneExtra(e.Extra)
	if e.ForkedFrom != nil {
		f := *e.ForkedFrom
		c.ForkedFrom = &f
	}
	if e.Cost != nil {
		cs := *e.Cost
		if e.Cost.ModelUsage != nil {
			cs.ModelUsage = make(map[string]message.ModelUsage, len(e.Cost.ModelUsage))
			for k, v := range e.Cost.ModelUsage {
				cs.ModelUsage[k] = v
			}
		}
		c.Cost = &cs
	}
	if e.Message != nil {
		m := *e.Message
		m.Content = cloneContents(e.Message.Content)
		m.StopReason = clonePtr(e.Message.StopReason)
		m.StopSequence = clonePtr(e.Message.StopSequence)
		m.Usage = cloneRaw(e.Message.Usage)
		m.Extra = cloneExtra(e.Message.Extra)
		c.Message = &m
	}
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage{}, r...)
}

func cloneExtra(x map[string]json.RawMessage) map[string]json.RawMessage {
	if x == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(x))
	for k, v := range x {
		out[k] = cloneRaw(v)
	}
	return out
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneContents deep-copies content blocks.
func cloneContents(cs []model.Content) []model.Content {
	if cs == nil {
		return nil
	}
	out := make([]model.Content, len(cs))
	for i := range cs {
		cloneContentTo(&out[i], &cs[i])
	}
	return out
}

// cloneContentTo sets *d to a deep copy of *c. By pointer: a transcript's
// lines are made deep in a turn's stack, where each 240-byte block copied
// into a frame (and a tool result's nested blocks, once per level) adds to
// the stack every session's goroutine grows to.
func cloneContentTo(d, c *model.Content) {
	*d = *c
	d.Input = cloneRaw(c.Input)
	d.Raw = cloneRaw(c.Raw)
	d.Blocks = cloneContents(c.Blocks)
	d.IsError = clonePtr(c.IsError)
	d.Source = clonePtr(c.Source)
	d.CacheControl = clonePtr(c.CacheControl)
}
