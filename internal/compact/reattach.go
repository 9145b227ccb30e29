package compact

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/model"
)

// Limits of the files re-attached after a compaction: at most
// ReattachFiles files, each cut to ReattachFileTokens, all of them within
// the budget the caller gives.
const (
	ReattachFiles      = 5
	ReattachFileTokens = 5_000
)

// fileTool reports whether name is one of the built-in tools whose
// file_path input names a file the model has seen: read, or written with
// content it chose.
func fileTool(name string) bool { return name == "Read" || name == "Write" || name == "Edit" }

// FilesSeen returns the files the model read or wrote in summarised, most
// recent first, each once, leaving out those a call in kept names: those
// stay in the context verbatim. A call whose result was an error does not
// count.
func FilesSeen(summarised, kept []model.Message) []string {
	inKept := map[string]bool{}
	for _, p := range fileCalls(kept, nil) {
		inKept[p] = true
	}
	failed := map[string]bool{}
	for _, m := range summarised {
		for _, c := range m.Content {
			if c.Type == model.TypeToolResult && c.IsError != nil && *c.IsError {
				failed[c.ToolUseID] = true
			}
		}
	}
	var out []string
	seen := map[string]bool{}
	calls := fileCalls(summarised, failed)
	for i := len(calls) - 1; i >= 0; i-- {
		p := calls[i]
		if !seen[p] && !inKept[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// fileCalls lists the file_path of every file tool call in msgs, oldest
// first, skipping the calls whose id is in skip.
func fileCalls(msgs []model.Message, skip map[string]bool) []string {
	var out []string
	for _, m := range msgs {
		for _, c := range m.Content {
			if c.Type != model.TypeToolUse || !fileTool(c.Name) || skip[c.ID] {
				continue
			}
			var in struct {
				FilePath string `json:"file_path"`
			}
			if json.Unmarshal(c.Input, &in) == nil && strings.HasPrefix(in.FilePath, "/") {
				out = append(out, in.FilePath)
			}
		}
	}
	return out
}

// Reattach returns the texts that give the model back the files it had
// seen before a compaction (see [FilesSeen]): each file as it is now,
// numbered by line as Read shows it, cut to [ReattachFileTokens]; at most
// [ReattachFiles] files and budget tokens in all, the most recent first.
// read reads a file; a file it cannot read (gone, say) is left out.
func Reattach(paths []string, read func(string) ([]byte, error), budget int64) []string {
	var out []string
	for _, p := range paths {
		if len(out) == ReattachFiles {
			break
		}
		data, err := read(p)
		if err != nil {
			continue
		}
		text := reattachText(p, string(data))
		n := int64(len(text)) / 4
		if n > budget {
			continue // a smaller, older file may still fit
		}
		budget -= n
		out = append(out, text)
	}
	return out
}

func reattachText(path, data string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Before the conversation was compacted you had this file open: %s. Its current content follows", path)
	limit := ReattachFileTokens * 4
	lines := strings.SplitAfter(data, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var body strings.Builder
	cut := 0
	for i, l := range lines {
		line := fmt.Sprintf("%d\t%s", i+1, strings.TrimRight(l, "\r\n"))
		if body.Len()+len(line)+1 > limit {
			cut = len(lines) - i
			break
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	if cut > 0 {
		fmt.Fprintf(&b, " (its first lines only: %d more lines are not shown; read the file again for them)", cut)
	}
	b.WriteString(":\n")
	b.WriteString(body.String())
	return strings.TrimRight(b.String(), "\n")
}

// SummaryOf returns the part of a summary reply that stands for the
// conversation: the inside of its <summary> element when there is one (a
// model that was asked to think first may put its notes before it in an
// <analysis> element), else the whole reply without an <analysis>
// element.
func SummaryOf(reply string) string {
	if i := strings.Index(reply, "<summary>"); i >= 0 {
		rest := reply[i+len("<summary>"):]
		if j := strings.LastIndex(rest, "</summary>"); j >= 0 {
			rest = rest[:j]
		}
		if s := strings.TrimSpace(rest); s != "" {
			return s
		}
	}
	if i := strings.Index(reply, "<analysis>"); i >= 0 {
		if j := strings.Index(reply[i:], "</analysis>"); j >= 0 {
			reply = reply[:i] + reply[i+j+len("</analysis>"):]
		}
	}
	return strings.TrimSpace(reply)
}
