package tools

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// bashMaxOutputChars is how many characters of each output stream the model
// sees, as the reference's BASH_MAX_OUTPUT_LENGTH default.
const bashMaxOutputChars = 30000

// bashSpillChars is how many characters of each stream a command keeps when
// the session saves oversized results to files (tool.Env.ResultsDir): the
// loop then shows the model a preview and the path of the whole output,
// up to this much (at most 8 MB of memory per stream).
const bashSpillChars = 2_000_000

// bashCapture is an io.Writer that keeps the head of a stream and only counts
// the rest, so that a command printing gigabytes costs a fixed amount of
// memory. It always accepts everything written, so the command never blocks
// on a full pipe. It is not safe for concurrent use; os/exec gives each
// stream its own copying goroutine.
//
// Leading whitespace is dropped as it arrives (per lead), so that the kept
// head starts with content.
type bashCapture struct {
	limit     int      // characters shown
	lead      bashLead // how leading whitespace is dropped
	started   bool     // a non-space byte has been seen
	pending   []byte   // leading whitespace kept until content starts
	head      []byte   // the first keep bytes of the stream after the lead
	keep      int      // 4 bytes per shown character, enough for any UTF-8
	total     int64    // bytes after the lead
	droppedNL int64    // newlines among the bytes not kept
	tailBytes int64    // bytes in the stream's trailing whitespace run
	tailNL    int64    // newlines in that run
}

// bashLead says which leading whitespace of a stream is dropped.
type bashLead int

const (
	// bashLeadBlankLines drops leading blank lines but keeps the
	// indentation of the first line with content (stdout).
	bashLeadBlankLines bashLead = iota
	// bashLeadSpace drops all leading whitespace (stderr).
	bashLeadSpace
)

func newBashCapture(limit int, lead bashLead) *bashCapture {
	return &bashCapture{limit: limit, lead: lead, keep: limit * utf8.UTFMax}
}

func (c *bashCapture) Write(p []byte) (int, error) {
	n := len(p)
	if !c.started {
		i := bytes.IndexFunc(p, bashNotSpace)
		if i < 0 {
			c.hold(p)
			return n, nil
		}
		c.hold(p[:i])
		c.started = true
		c.store(c.pending)
		c.pending = nil
		p = p[i:]
	}
	c.store(p)
	return n, nil
}

// hold keeps the part of leading whitespace that may belong to the first
// line with content.
func (c *bashCapture) hold(p []byte) {
	if c.lead == bashLeadSpace {
		return
	}
	if nl := bytes.LastIndexByte(p, '\n'); nl >= 0 {
		c.pending = c.pending[:0]
		p = p[nl+1:]
	}
	if room := c.keep - len(c.pending); room > 0 {
		c.pending = append(c.pending, p[:min(room, len(p))]...)
	}
}

func (c *bashCapture) store(p []byte) {
	if len(p) == 0 {
		return
	}
	n := len(p)
	c.total += int64(n)
	if i := bytes.LastIndexFunc(p, bashNotSpace); i >= 0 {
		_, size := utf8.DecodeRune(p[i:])
		c.tailBytes = int64(n - i - size)
		c.tailNL = int64(bytes.Count(p[i+size:], []byte{'\n'}))
	} else {
		c.tailBytes += int64(n)
		c.tailNL += int64(bytes.Count(p, []byte{'\n'}))
	}
	if room := c.keep - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	c.droppedNL += int64(bytes.Count(p, []byte{'\n'}))
}

// bashIsSpace reports ASCII whitespace. Only ASCII counts, so that a
// character split across two writes is never mistaken for space.
func bashIsSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}

func bashNotSpace(r rune) bool { return !bashIsSpace(r) }

// text returns the stream as the model sees it: leading whitespace dropped
// as lead says, trailing whitespace removed, and at most limit characters
// followed by a note counting the lines left out.
func (c *bashCapture) text() string {
	s := string(c.head)
	whole := c.total-c.tailBytes <= int64(len(c.head)) // all content kept
	var droppedNL int64
	if whole {
		s = strings.TrimRightFunc(s, bashIsSpace)
	} else {
		// The last non-space byte was not kept, so the trailing
		// whitespace run lies among the dropped bytes.
		droppedNL = c.droppedNL - c.tailNL
	}
	cut, n := 0, 0
	for cut < len(s) && n < c.limit {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		n++
	}
	if whole && cut == len(s) {
		return s
	}
	lines := int64(strings.Count(s[cut:], "\n")) + droppedNL + 1
	return s[:cut] + fmt.Sprintf("\n\n... [%d lines truncated] ...", lines)
}

// bashJoin joins the non-empty parts with newlines.
func bashJoin(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
	return b.String()
}
