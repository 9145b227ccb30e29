package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Info summarises a session for listing.
type Info struct {
	SessionID    string
	Summary      string    // what a list shows: title, last prompt, summary or first prompt
	LastModified time.Time // the transcript's modification time
	FileSize     int64
	CustomTitle  string // the custom title, or else the AI title
	FirstPrompt  string
	GitBranch    string
	Cwd          string
	Tag          string
	CreatedAt    time.Time // the first entry's timestamp; zero if unknown
	Path         string    // the transcript file
}

// ListOptions selects the sessions List returns.
type ListOptions struct {
	// Limit is the most sessions returned; 0 means all.
	Limit int
	// Offset skips that many sessions of the sorted list.
	Offset int
}

// summaryWindow is how much of a transcript's head and tail List reads.
const summaryWindow = 64 * 1024

// List returns the sessions of cwd ("" for every project), most recently
// modified first. Sidechain transcripts and sessions with nothing to show
// (no title, prompt or summary) are left out.
func List(configDir, cwd string, opts ListOptions) ([]Info, error) {
	dirs, err := projectDirs(configDir, cwd)
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, d := range dirs {
		des, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, de := range des {
			n := de.Name()
			if de.IsDir() || !strings.HasSuffix(n, ".jsonl") || !validID(strings.TrimSuffix(n, ".jsonl")) {
				continue
			}
			info, ok, err := ReadInfo(filepath.Join(d, n))
			if err != nil || !ok {
				continue
			}
			out = append(out, info)
		}
	}
	slices.SortFunc(out, func(a, b Info) int {
		if c := b.LastModified.Compare(a.LastModified); c != 0 {
			return c
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
	if opts.Offset > 0 {
		out = out[min(opts.Offset, len(out)):]
	}
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out, nil
}

// Latest returns the most recently modified session of cwd that can be
// continued (--continue), or an error wrapping [ErrNotFound].
func Latest(configDir, cwd string) (Info, error) {
	l, err := List(configDir, cwd, ListOptions{Limit: 1})
	if err != nil {
		return Info{}, err
	}
	if len(l) == 0 {
		return Info{}, fmt.Errorf("session: no session for %s: %w", cwd, ErrNotFound)
	}
	return l[0], nil
}

// ReadInfo summarises the transcript at path from its first and last 64
// KiB. ok is false for a sidechain transcript or one with nothing to show.
func ReadInfo(path string) (info Info, ok bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, false, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Info{}, false, fmt.Errorf("session: %w", err)
	}
	size := fi.Size()
	head, tail, err := readHeadTail(f, size)
	if err != nil {
		return Info{}, false, fmt.Errorf("session: %s: %w", path, err)
	}
	info = Info{
		SessionID:    strings.TrimSuffix(filepath.Base(path), ".jsonl"),
		LastModified: fi.ModTime(),
		FileSize:     size,
		Path:         path,
	}
	headLines := scanLines(head, false)
	tailLines := headLines
	if tail != nil {
		tailLines = scanLines(tail, true)
	}
	for _, l := range headLines {
		if _, ok := l["isSidechain"]; ok {
			if str(l, "isSidechain") == "true" {
				return Info{}, false, nil
			}
			break
		}
	}
	lastOf := func(key string) string {
		for _, lines := range [][]map[string]json.RawMessage{tailLines, headLines} {
			for i := len(lines) - 1; i >= 0; i-- {
				if s := str(lines[i], key); s != "" {
					return s
				}
			}
		}
		return ""
	}
	firstOf := func(key string) string {
		for _, l := range headLines {
			if s := str(l, key); s != "" {
				return s
			}
		}
		return ""
	}
	title := lastOf("customTitle")
	if title == "" {
		title = lastOf("aiTitle")
	}
	info.CustomTitle = title
	info.Cwd = firstOf("cwd")
	if info.GitBranch = lastOfIn(tailLines, "gitBranch"); info.GitBranch == "" {
		info.GitBranch = firstOf("gitBranch")
	}
	if ts := firstOf("timestamp"); ts != "" {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			info.CreatedAt = t
		}
	}
	info.Tag = lastTag(tailLines, headLines)
	for _, l := range headLines {
		if p := meaningfulPrompt(l); p != "" {
			info.FirstPrompt = p
			break
		}
	}
	var summary string
	for _, lines := range [][]map[string]json.RawMessage{tailLines, headLines} {
		for i := len(lines) - 1; i >= 0 && summary == ""; i-- {
			if str(lines[i], "type") == TypeSummary {
				summary = str(lines[i], "summary")
			}
		}
	}
	for _, s := range []string{title, lastOf("lastPrompt"), summary, info.FirstPrompt} {
		if s != "" {
			info.Summary = s
			break
		}
	}
	if info.Summary == "" {
		return Info{}, false, nil
	}
	return info, true, nil
}

// readHeadTail returns the first and last window of the file; tail is nil
// when the head covers the whole file.
func readHeadTail(f *os.File, size int64) (head, tail []byte, err error) {
	if size <= 2*summaryWindow {
		head, err = io.ReadAll(f)
		return head, nil, err
	}
	head = make([]byte, summaryWindow)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, nil, err
	}
	tail = make([]byte, summaryWindow)
	if _, err := f.ReadAt(tail, size-summaryWindow); err != nil && err != io.EOF {
		return nil, nil, err
	}
	return head, tail, nil
}

// scanLines parses the complete lines of a window as JSON objects, skipping
// lines that do not parse (a cut line at either end, or damage). For a
// tail window the first (partial) line is dropped.
func scanLines(b []byte, isTail bool) []map[string]json.RawMessage {
	if isTail {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return nil
		}
		b = b[i+1:]
	}
	var out []map[string]json.RawMessage
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) == nil && m != nil {
			out = append(out, m)
		}
	}
	return out
}

// str returns field k of a line as a string: the string's value, or the
// JSON text of other values ("" for null or a missing field).
func str(l map[string]json.RawMessage, k string) string {
	v, ok := l[k]
	if !ok || string(v) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

func lastOfIn(lines []map[string]json.RawMessage, key string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if s := str(lines[i], key); s != "" {
			return s
		}
	}
	return ""
}

// lastTag returns the tag of the last tag entry ("" when that clears it).
func lastTag(windows ...[]map[string]json.RawMessage) string {
	for _, lines := range windows {
		for i := len(lines) - 1; i >= 0; i-- {
			if str(lines[i], "type") == TypeTag {
				return str(lines[i], "tag")
			}
		}
	}
	return ""
}

// promptSkips are prefixes of user text that is not a prompt a person
// typed.
var promptSkips = []string{
	"<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>",
	"<session-start-hook>", "<tick>", "<goal>", "[Request interrupted by user",
	"<ide_opened_file>", "<ide_selection>", "<ide_diagnostics>", "<system-reminder>",
}

// maxPromptRunes is how much of the first prompt Info keeps.
const maxPromptRunes = 200

// meaningfulPrompt returns the prompt text of a user line, or "" when the
// line is not one a person typed (tool results, meta, compact summaries,
// command output, markers).
func meaningfulPrompt(l map[string]json.RawMessage) string {
	if str(l, "type") != TypeUser || str(l, "isMeta") == "true" || str(l, "isCompactSummary") == "true" || str(l, "isSidechain") == "true" {
		return ""
	}
	var msg struct {
		Content json.RawMessage `json:"content"`
	}
	if json.Unmarshal(l["message"], &msg) != nil || len(msg.Content) == 0 {
		return ""
	}
	var texts []string
	var s string
	if json.Unmarshal(msg.Content, &s) == nil {
		texts = []string{s}
	} else {
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if json.Unmarshal(msg.Content, &blocks) != nil {
			return ""
		}
		for _, b := range blocks {
			switch b.Type {
			case "tool_result":
				return ""
			case "text":
				texts = append(texts, b.Text)
			}
		}
	}
	for _, t := range texts {
		t = strings.TrimSpace(t)
		if t == "" || skipPrompt(t) {
			continue
		}
		return truncateRunes(t, maxPromptRunes)
	}
	return ""
}

func skipPrompt(t string) bool {
	for _, p := range promptSkips {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + "…"
		}
		i++
	}
	return s
}
