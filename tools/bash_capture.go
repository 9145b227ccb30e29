package tools

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/agentloop/agentloop/internal/spill"
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
	// last holds the most recent bytes stored (at least lastKeep of
	// them once that many arrived), for the tail a failed command's
	// result shows.
	last     []byte
	lastKeep int
}

// bashFailureChars bounds the output a failed command (an exit status
// that is not an answer, a timeout, an abort) shows inline: its head and
// its tail, as the reference keeps a failure's inline output to about
// 10,000 characters, head and tail, where an error message at the end is
// most often found.
const bashFailureChars = 10_000

// bashLastKeep is how many bytes of a stream's end are kept for the tail:
// 4 bytes per character of the failure limit, enough for any UTF-8.
const bashLastKeep = bashFailureChars * utf8.UTFMax

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
	return &bashCapture{limit: limit, lead: lead, keep: limit * utf8.UTFMax, lastKeep: bashLastKeep}
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

// Sizes of the buffer ReadFrom reads through: it starts small, as most
// commands print little and the buffer is held for as long as the
// command runs, and doubles each time a read fills it, up to the size
// io.Copy would have used from the start.
const (
	bashReadMin = 1 << 10
	bashReadMax = 32 << 10
)

// ReadFrom implements [io.ReaderFrom]: it reads r to its end into the
// capture. os/exec copies a command's output pipe with io.Copy, which
// otherwise gives every stream of every command a 32 KiB buffer for its
// whole run, even one that prints a line.
func (c *bashCapture) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, bashReadMin)
	var n int64
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += int64(k)
			c.Write(buf[:k])
			if k == len(buf) && len(buf) < bashReadMax {
				buf = make([]byte, 2*len(buf))
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
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
	c.last = append(c.last, p[max(len(p)-c.lastKeep, 0):]...)
	if len(c.last) > 2*c.lastKeep {
		c.last = append(c.last[:0], c.last[len(c.last)-c.lastKeep:]...)
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

// content returns what the capture knows of the stream, trailing
// whitespace removed: the whole of it (whole set, in head), or its kept
// head and its last bytes (tail) with the number of newlines in the part
// between them that neither holds (gapNL). chars is the stream's length
// in characters, exact when whole, else an upper bound (its bytes).
func (c *bashCapture) content() (head, tail string, gapNL int64, chars int, whole bool) {
	end := c.total - c.tailBytes // bytes up to the last non-space one
	if end <= int64(len(c.head)) {
		s := strings.TrimRightFunc(string(c.head[:end]), bashIsSpace)
		return s, "", 0, utf8.RuneCountInString(s), true
	}
	// last holds at least the final lastKeep bytes of the stream.
	lastStart := c.total - int64(len(c.last)) // offset of last[0]
	if lastStart <= int64(len(c.head)) {
		// head and last overlap or meet: the whole stream is known.
		s := string(c.head) + string(c.last[int64(len(c.head))-lastStart:])
		s = strings.TrimRightFunc(s, bashIsSpace)
		return s, "", 0, utf8.RuneCountInString(s), true
	}
	t := c.last
	for len(t) > 0 && !utf8.RuneStart(t[0]) {
		t = t[1:] // a character cut by the window's start
	}
	h := c.head
	for len(h) > 0 && !utf8.Valid(h[max(len(h)-utf8.UTFMax, 0):]) {
		h = h[:len(h)-1] // a character cut by the head's end
	}
	tail = strings.TrimRightFunc(string(t), bashIsSpace)
	// Newlines after the head, less the trailing run's and the tail's.
	gapNL = c.droppedNL - c.tailNL - int64(strings.Count(tail, "\n"))
	return string(h), tail, max(gapNL, 0), int(end), false
}

// failureText returns the stream as a failed command's result shows it:
// whole when it has at most budget characters, else its first budget/2
// and its last budget − budget/2 characters (each cut at a line break
// when one is near) around a note counting the lines left out. Leading
// whitespace is dropped as for text.
func (c *bashCapture) failureText(budget int) string {
	head, tail, gapNL, chars, whole := c.content()
	if whole && chars <= budget {
		return head
	}
	if whole {
		// Split the one text: the tail comes from its end.
		cut := spill.ByteOffset(head, chars-(budget-budget/2))
		head, tail = head[:cut], head[cut:]
	}
	h := head[:spill.ByteOffset(head, budget/2)]
	if i := strings.LastIndexByte(h, '\n'); i > len(h)/2 {
		h = h[:i]
	}
	tn := utf8.RuneCountInString(tail)
	t := tail[spill.ByteOffset(tail, tn-(budget-budget/2)):]
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)/2 {
		t = t[i+1:]
	}
	left := int64(strings.Count(head[len(h):], "\n")) + gapNL + int64(strings.Count(tail[:len(tail)-len(t)], "\n"))
	return h + fmt.Sprintf("\n\n... [%d lines truncated] ...\n\n", max(left-1, 1)) + t
}

// bashFailureStreams returns stdout and stderr as a failed command's
// result shows them: together at most bashFailureChars characters, head
// and tail of each. stderr, where errors go, gets at least half of the
// budget when it needs it, and stdout what stderr leaves.
func bashFailureStreams(stdout, stderr *bashCapture) (string, string) {
	_, _, _, nOut, _ := stdout.content()
	_, _, _, nErr, _ := stderr.content()
	errBudget := min(nErr, max(bashFailureChars/2, bashFailureChars-nOut))
	return stdout.failureText(max(bashFailureChars-errBudget, 0)), stderr.failureText(max(errBudget, 0))
}
