// Package spill keeps oversized tool results out of the model's context:
// a result whose text is longer than the tool's inline limit is saved to a
// file and replaced by a preview (its first 2 KB) and the file's path,
// which the model can read in pieces with the Read tool. The preview has
// the reference's form: <persisted-output>, the size and path, "Preview
// (first 2KB):", the head cut at a line break, "...", </persisted-output>.
//
// The engine calls [Apply] on each tool_result block after the tool and
// its hooks ran and before the block enters the history, so the
// transcript, the stream and the next request all carry the preview.
package spill

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// Sizes of what is kept.
const (
	// MaxFileBytes bounds a saved file; longer output is cut there, as
	// the reference cuts its saved output at 64 MiB.
	MaxFileBytes = 64 << 20
	// HeadBytes bounds the preview's head.
	HeadBytes = 2000
)

// Limit returns the inline limit for a tool whose Info.MaxResultChars is
// n: the default for 0, the ceiling for more than the ceiling, and -1
// (no limit) for a negative n.
func Limit(n int) int {
	switch {
	case n == 0:
		return tool.DefaultMaxResultChars
	case n < 0:
		return -1
	case n > tool.MaxResultCharsCeiling:
		return tool.MaxResultCharsCeiling
	}
	return n
}

// Apply returns b (a tool_result block) as the model should see it. When
// limit ≥ 0, dir is set and the text of b (its string content, or its
// text blocks together) is longer than limit characters, the text goes to
// dir/<tool_use_id>.txt (dir is created, 0700; the file is 0600) and is
// replaced by one text block with a preview and the path; image and other
// blocks stay as they are. It reports whether b was replaced. If the file
// cannot be written the preview says so instead of giving a path, so the
// context stays bounded either way.
func Apply(b model.Content, limit int, dir string) (model.Content, bool) {
	if limit < 0 || dir == "" || b.Type != model.TypeToolResult || textBytes(b) <= limit {
		return b, false
	}
	text, n := resultText(b)
	if n <= limit {
		return b, false
	}
	path, err := save(dir, b.ToolUseID, text)
	preview := Preview(text, path, err)
	if b.Blocks == nil {
		b.Text = preview
		return b, true
	}
	blocks := make([]model.Content, 0, len(b.Blocks))
	placed := false
	for _, c := range b.Blocks {
		if c.Type != model.TypeText {
			blocks = append(blocks, c)
			continue
		}
		if !placed {
			blocks = append(blocks, model.TextBlock(preview))
			placed = true
		}
	}
	b.Blocks = blocks
	return b, true
}

// textBytes is the length in bytes of what resultText returns, without
// joining or counting anything: a text has at most as many characters as
// bytes, so a result within the limit in bytes is within it in characters.
func textBytes(b model.Content) int {
	if b.Blocks == nil {
		return len(b.Text)
	}
	n, texts := 0, 0
	for _, c := range b.Blocks {
		if c.Type == model.TypeText {
			n += len(c.Text)
			texts++
		}
	}
	if texts > 1 {
		n += texts - 1 // the newlines that join them
	}
	return n
}

// resultText returns the text of a tool_result and its length in
// characters.
func resultText(b model.Content) (string, int) {
	if b.Blocks == nil {
		return b.Text, utf8.RuneCountInString(b.Text)
	}
	var parts []string
	for _, c := range b.Blocks {
		if c.Type == model.TypeText {
			parts = append(parts, c.Text)
		}
	}
	s := strings.Join(parts, "\n")
	return s, utf8.RuneCountInString(s)
}

// save writes text to dir/<id>.txt, cut at MaxFileBytes.
func save(dir, id, text string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	path := filepath.Join(dir, fileName(id))
	if len(text) > MaxFileBytes {
		cut := MaxFileBytes
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut] + "\n[output cut here: it went on past 64 MiB]\n"
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// fileName makes a file name of a tool_use id: characters other than
// letters, digits, '-' and '_' become '_'.
func fileName(id string) string {
	if id == "" {
		id = "result"
	}
	b := []byte(id)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b) + ".txt"
}

// Preview is the text the model gets for a result saved at path (or not
// saved, when err is set): the reference's <persisted-output> block with
// the text's size, the path and the first HeadBytes bytes of the text, cut
// at a line break when one is in their second half.
func Preview(text, path string, err error) string {
	var sb strings.Builder
	sb.WriteString("<persisted-output>\n")
	if err == nil {
		fmt.Fprintf(&sb, "Output too large (%s). Full output saved to: %s\n", size(len(text)), path)
	} else {
		fmt.Fprintf(&sb, "Output too large (%s). Saving it to a file failed (%v); only this preview is kept.\n", size(len(text)), err)
	}
	sb.WriteString("\nPreview (first 2KB):\n")
	sb.WriteString(head(text))
	sb.WriteString("\n...\n</persisted-output>")
	return sb.String()
}

// size is n bytes as the reference writes it: 164.9KB, 2.5MB.
func size(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d bytes", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1fMB", float64(n)/(1024*1024))
}

// head is the first HeadBytes bytes of text (whole characters), cut at
// the last line break when it is in their second half.
func head(text string) string {
	h := len(text)
	if h > HeadBytes {
		h = HeadBytes
		for h > 0 && !utf8.RuneStart(text[h]) {
			h--
		}
	}
	out := text[:h]
	if i := strings.LastIndexByte(out, '\n'); i > len(out)/2 {
		out = out[:i]
	}
	return out
}

// ByteOffset returns the byte offset of character (rune) k of s: 0 for
// k ≤ 0, len(s) past its end.
func ByteOffset(s string, k int) int {
	if k <= 0 {
		return 0
	}
	for i := range s {
		if k == 0 {
			return i
		}
		k--
	}
	return len(s)
}
