package tools

import (
	"container/heap"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/agentloop/agentloop/tool"
	"github.com/bmatcuk/doublestar/v4"
)

//go:embed grep.md
var grepDescription string

const grepSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "pattern": {"description": "The regular expression to search file contents for.", "type": "string"},
    "path": {"description": "File or directory to search in. Defaults to the current working directory.", "type": "string"},
    "glob": {"description": "Only search files whose names match this glob, such as \"*.go\" or \"*.{ts,tsx}\". Several globs may be separated by spaces or commas; a leading \"!\" excludes.", "type": "string"},
    "output_mode": {"description": "\"files_with_matches\" (the default) lists the files that match; \"content\" shows the matching lines; \"count\" gives the number of matching lines per file.", "type": "string", "enum": ["content", "files_with_matches", "count"]},
    "-B": {"description": "Lines of context to show before each match (content mode).", "type": "number"},
    "-A": {"description": "Lines of context to show after each match (content mode).", "type": "number"},
    "-C": {"description": "Lines of context before and after each match.", "type": "number"},
    "context": {"description": "Lines of context before and after each match (content mode); the same as -C.", "type": "number"},
    "-n": {"description": "Show line numbers (content mode). Defaults to true.", "type": "boolean"},
    "-i": {"description": "Ignore case.", "type": "boolean"},
    "-o": {"description": "Show only the matching part of each line, one match per output line (content mode).", "type": "boolean"},
    "type": {"description": "Only search files of this type, such as go, py, js, ts, rust, java or md.", "type": "string"},
    "head_limit": {"description": "Return at most this many output lines (content mode), files or counts. Defaults to 250; 0 means no limit.", "type": "number"},
    "offset": {"description": "Skip this many output lines, files or counts before applying head_limit. Defaults to 0.", "type": "number"},
    "multiline": {"description": "Let the pattern span lines: . matches line breaks too. Defaults to false.", "type": "boolean"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// Grep limits.
const (
	grepDefaultHeadLimit = 250
	grepMaxContext       = 10000
)

// grepMaxFileSize is the size past which a walk skips a file (and says
// so in the result); a file named by path is searched whatever its size.
// A variable so that tests can lower it.
var grepMaxFileSize = 256 << 20

type grepInput struct {
	Pattern    string   `json:"pattern"`
	Path       *string  `json:"path,omitempty"`
	Glob       string   `json:"glob,omitempty"`
	OutputMode string   `json:"output_mode,omitempty"`
	Before     *float64 `json:"-B,omitempty"`
	After      *float64 `json:"-A,omitempty"`
	C          *float64 `json:"-C,omitempty"`
	Context    *float64 `json:"context,omitempty"`
	LineNums   *bool    `json:"-n,omitempty"`
	IgnoreCase bool     `json:"-i,omitempty"`
	Only       bool     `json:"-o,omitempty"`
	Type       string   `json:"type,omitempty"`
	HeadLimit  *float64 `json:"head_limit,omitempty"`
	Offset     *float64 `json:"offset,omitempty"`
	Multiline  bool     `json:"multiline,omitempty"`
}

// GrepFilesResult is the tool_use_result of Grep in files_with_matches
// mode. NumFiles counts the files listed, TotalFiles all that matched.
type GrepFilesResult struct {
	Mode          string   `json:"mode"`
	Filenames     []string `json:"filenames"`
	NumFiles      int      `json:"numFiles"`
	TotalFiles    int      `json:"totalFiles"`
	AppliedLimit  *int     `json:"appliedLimit,omitempty"`
	AppliedOffset *int     `json:"appliedOffset,omitempty"`
}

// GrepContentResult is the tool_use_result of Grep in content mode.
// NumLines counts the lines returned, TotalLines all there were. As in the
// reference, content mode lists no files.
type GrepContentResult struct {
	Mode          string   `json:"mode"`
	NumFiles      int      `json:"numFiles"`
	Filenames     []string `json:"filenames"`
	Content       string   `json:"content"`
	NumLines      int      `json:"numLines"`
	TotalLines    int      `json:"totalLines"`
	AppliedLimit  *int     `json:"appliedLimit,omitempty"`
	AppliedOffset *int     `json:"appliedOffset,omitempty"`
}

// GrepCountResult is the tool_use_result of Grep in count mode. NumFiles
// and NumMatches are totals over every file that matched; NumLines counts
// the "path:N" lines returned.
type GrepCountResult struct {
	Mode          string   `json:"mode"`
	NumFiles      int      `json:"numFiles"`
	Filenames     []string `json:"filenames"`
	Content       string   `json:"content"`
	NumMatches    int      `json:"numMatches"`
	NumLines      int      `json:"numLines"`
	AppliedLimit  *int     `json:"appliedLimit,omitempty"`
	AppliedOffset *int     `json:"appliedOffset,omitempty"`
}

// Grep returns the Grep tool: a search of file contents with ripgrep's
// behaviour, implemented in Go. It honours .gitignore (inside git
// repositories), .ignore and .rgignore files, skips hidden and binary files
// and version-control directories, and does not follow symbolic links, all
// only while walking a directory: a path naming a file is always searched.
// Patterns use Go's RE2 syntax, which covers ripgrep's default engine except
// for a few Unicode details (\w, \d and \b are ASCII here). Directories are
// searched by a bounded pool of goroutines. It only reads.
func Grep() tool.Tool {
	return tool.New("Grep", grepDescription, runGrep, &tool.Options{
		ReadOnly: true,
		Schema:   json.RawMessage(grepSchema),
	})
}

// grepQuery is a validated Grep call.
type grepQuery struct {
	search     grepSearch
	mode       string
	limit      int // 0: none
	offset     int
	types      []nameGlob // name globs of the selected types
	include    []grepGlob
	exclude    []grepGlob
	singleFile bool
}

type grepGlob struct {
	pattern  string
	anchored bool // matched against the path from the search root, else against the name
}

func (g grepGlob) match(rel, name string) bool {
	s := name
	if g.anchored {
		s = rel
	}
	ok, _ := doublestar.Match(g.pattern, s)
	return ok
}

func runGrep(ctx context.Context, in grepInput, call *tool.Call) (tool.Result, error) {
	env := call.Env
	q, errText := newGrepQuery(in)
	if errText != "" {
		return tool.Error(errText), nil
	}
	base, errRes := searchRoot(env, in.Path)
	if errRes != nil {
		return *errRes, nil
	}
	info, err := os.Stat(base)
	switch {
	case isNotExist(err):
		return tool.Error(notExistMessage(env, "Path "+base)), nil
	case err != nil:
		return tool.Error(fmt.Sprintf("Cannot search %s: %v", base, pathErrCause(err))), nil
	}
	col := newGrepCollector(q, envCwd(env))
	if !info.IsDir() {
		if !info.Mode().IsRegular() {
			return tool.Error(fmt.Sprintf("Cannot search %s: it is not a regular file (%s).", base, specialFileKind(info.Mode()))), nil
		}
		q.singleFile = true
		phys := physicalPath(base)
		if readDenied(env, "Grep", base, phys) {
			return tool.Error(readDeniedMessage("Grep", base)), nil
		}
		data, release, err := grepLoadPath(phys)
		if err != nil {
			return tool.Error(fmt.Sprintf("Cannot read %s: %v", base, pathErrCause(err))), nil
		}
		err = grepGuardFault(func() error {
			return col.searchFile(ctx, base, data, func() int64 { return info.ModTime().UnixMilli() })
		})
		release()
		switch {
		case errors.Is(err, errGrepFault):
			return tool.Error(fmt.Sprintf("Cannot read %s: %v", base, err)), nil
		case err != nil:
			return tool.Result{}, fmt.Errorf("grep: search of %s stopped: %w", base, err)
		}
	} else {
		cfg := walkConfig{
			ignore:  true,
			descend: q.descend,
			name:    q.wantsName,
			deny:    denyFilter(env, "Grep"),
			file: func(abs, rel string, d fs.DirEntry) {
				if ctx.Err() != nil || !q.wants(rel, d.Name()) {
					return
				}
				bp := grepReadPool.Get().(*[]byte)
				defer grepReadPool.Put(bp)
				data, mtime, mapped, err := grepReadFile(abs, *bp)
				if !mapped {
					*bp = data[:0]
				}
				if errors.Is(err, errGrepTooLarge) {
					col.skipLarge(abs)
				}
				if err != nil {
					return
				}
				search := func() error {
					return col.searchFile(ctx, abs, data, func() int64 { return mtime })
				}
				// An error here means that ctx is done, which the walk
				// reports, or that the file shrank while mapped, and
				// it is skipped as one that cannot be read.
				if mapped {
					_ = grepGuardFault(search)
					grepUnmap(data)
				} else {
					_ = search()
				}
			},
		}
		err := walkTree(ctx, base, cfg)
		if ctx.Err() != nil {
			// Files may have been left out: no partial result.
			return tool.Result{}, fmt.Errorf("grep: search of %s stopped: %w", base, ctx.Err())
		}
		if err != nil {
			return tool.Error(fmt.Sprintf("Cannot search %s: %v", base, pathErrCause(err))), nil
		}
	}
	return col.result(), nil
}

// newGrepQuery checks and normalizes the input; it returns the text of an
// error for the model when something is wrong.
func newGrepQuery(in grepInput) (*grepQuery, string) {
	q := &grepQuery{mode: in.OutputMode, limit: grepDefaultHeadLimit}
	if q.mode == "" {
		q.mode = "files_with_matches"
	}
	m, err := newGrepMatcher(in.Pattern, in.IgnoreCase, in.Multiline)
	if err != nil {
		if err == errNewlineInPattern {
			return nil, "Invalid pattern: " + err.Error() + "."
		}
		return nil, fmt.Sprintf("Invalid regular expression %q: %v", in.Pattern, err)
	}
	ctxBoth := 0
	if in.C != nil {
		ctxBoth = clampContext(*in.C)
	}
	if in.Context != nil {
		ctxBoth = clampContext(*in.Context)
	}
	q.search = grepSearch{m: m, before: ctxBoth, after: ctxBoth, onlyMatching: in.Only, lineNumbers: true}
	if in.Before != nil {
		q.search.before = clampContext(*in.Before)
	}
	if in.After != nil {
		q.search.after = clampContext(*in.After)
	}
	if in.Only {
		q.search.before, q.search.after = 0, 0
	}
	if in.LineNums != nil {
		q.search.lineNumbers = *in.LineNums
	}
	if in.HeadLimit != nil {
		q.limit = numArg(*in.HeadLimit)
	}
	if in.Offset != nil {
		q.offset = numArg(*in.Offset)
	}
	for _, t := range strings.FieldsFunc(in.Type, func(r rune) bool { return r == ',' || r == ' ' }) {
		globs, ok := grepTypes()[strings.ToLower(t)]
		if !ok {
			return nil, fmt.Sprintf("Unknown file type %q. Known types: %s.", t, strings.Join(grepTypeNames(), ", "))
		}
		for _, g := range globs {
			q.types = append(q.types, newNameGlob(g))
		}
	}
	for _, g := range splitGlobs(in.Glob) {
		neg := strings.HasPrefix(g, "!")
		g = strings.TrimPrefix(g, "!")
		anchored := strings.Contains(strings.TrimSuffix(g, "/"), "/")
		g = strings.TrimPrefix(strings.TrimSuffix(g, "/"), "/")
		if g == "" {
			continue
		}
		if !doublestar.ValidatePattern(g) {
			return nil, fmt.Sprintf("Invalid glob %q.", g)
		}
		gg := grepGlob{pattern: g, anchored: anchored}
		if neg {
			q.exclude = append(q.exclude, gg)
		} else {
			q.include = append(q.include, gg)
		}
	}
	return q, ""
}

func clampContext(f float64) int { return min(numArg(f), grepMaxContext) }

// splitGlobs splits the glob parameter at whitespace, and at commas
// outside braces ("*.{ts,tsx}" stays whole).
func splitGlobs(s string) []string {
	var out []string
	for _, field := range strings.Fields(s) {
		depth, start := 0, 0
		for i, r := range field {
			switch r {
			case '{':
				depth++
			case '}':
				depth = max(0, depth-1)
			case ',':
				if depth == 0 {
					out = append(out, field[start:i])
					start = i + 1
				}
			}
		}
		out = append(out, field[start:])
	}
	out = slices.DeleteFunc(out, func(s string) bool { return s == "" || s == "!" })
	if len(out) == 0 {
		return nil
	}
	return out
}

// descend skips directories that an excluding glob matches.
func (q *grepQuery) descend(rel string, _ int) bool {
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	for _, g := range q.exclude {
		if g.match(rel, name) {
			return false
		}
	}
	return true
}

// wantsName applies the type filter to a file's name.
func (q *grepQuery) wantsName(name string) bool {
	return len(q.types) == 0 || slices.ContainsFunc(q.types, func(g nameGlob) bool { return g.match(name) })
}

// wants applies the type and glob filters to a file found in a walk.
func (q *grepQuery) wants(rel, name string) bool {
	if !q.wantsName(name) {
		return false
	}
	if len(q.include) > 0 && !slices.ContainsFunc(q.include, func(g grepGlob) bool { return g.match(rel, name) }) {
		return false
	}
	return !slices.ContainsFunc(q.exclude, func(g grepGlob) bool { return g.match(rel, name) })
}

// grepCollector gathers the results of concurrent file searches.
type grepCollector struct {
	q   *grepQuery
	cwd string

	mu     sync.Mutex
	files  []globMatch // files mode
	counts []grepCount // count mode
	kept   contentHeap // content mode: the files with the smallest names
	keptN  int         // lines held in kept
	totalL int         // lines of all files, content mode
	nFiles int         // files with output lines, content mode
	large  []string    // files skipped for their size
}

type grepCount struct {
	name string
	n    int
}

type contentFile struct {
	name  string
	lines []string
}

// contentHeap is a max-heap by name, so that the file with the largest name
// is dropped first once enough lines are held.
type contentHeap []contentFile

func (h contentHeap) Len() int           { return len(h) }
func (h contentHeap) Less(i, j int) bool { return h[i].name > h[j].name }
func (h contentHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *contentHeap) Push(x any)        { *h = append(*h, x.(contentFile)) }
func (h *contentHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func newGrepCollector(q *grepQuery, cwd string) *grepCollector {
	return &grepCollector{q: q, cwd: cwd}
}

// skipLarge records a file left out of a walk for its size.
func (c *grepCollector) skipLarge(abs string) {
	c.mu.Lock()
	c.large = append(c.large, displayPath(c.cwd, abs))
	c.mu.Unlock()
}

// searchFile searches one file's bytes and records what it found. mtime
// gives the file's modification time, needed for the files that match in
// files_with_matches mode only. It returns ctx.Err(), recording nothing,
// when ctx is done before the search ends.
func (c *grepCollector) searchFile(ctx context.Context, abs string, data []byte, mtime func() int64) error {
	s := &c.q.search
	name := displayPath(c.cwd, abs)
	if c.q.mode == "files_with_matches" {
		ok, err := s.hasMatch(ctx, data)
		if ok && err == nil {
			t := mtime()
			c.mu.Lock()
			c.files = append(c.files, globMatch{name, t})
			c.mu.Unlock()
		}
		return err
	}
	fm, err := s.find(ctx, data)
	if fm == nil || err != nil {
		return err
	}
	if c.q.mode == "count" {
		c.mu.Lock()
		c.counts = append(c.counts, grepCount{name, len(fm.lines)})
		c.mu.Unlock()
		return nil
	}
	prefix := name
	if c.q.singleFile {
		prefix = ""
	}
	lines := s.contentLines(prefix, data, fm)
	if len(lines) == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.totalL += len(lines)
	c.nFiles++
	heap.Push(&c.kept, contentFile{name, lines})
	c.keptN += len(lines)
	if c.q.limit > 0 {
		// Only the first offset+limit lines in name order can be shown:
		// drop files with larger names that are not needed for them.
		need := c.q.offset + c.q.limit
		for c.kept.Len() > 1 && c.keptN-len(c.kept[0].lines) >= need {
			f := heap.Pop(&c.kept).(contentFile)
			c.keptN -= len(f.lines)
		}
	}
	return nil
}

// result builds the tool result once every file has been searched: the
// result for the mode, followed by a note of the files skipped for their
// size, if any.
func (c *grepCollector) result() tool.Result {
	r := c.modeResult()
	if note := c.largeNote(); note != "" {
		if r.Content[0].Text != "" {
			note = "\n\n" + note
		}
		r.Content[0].Text += note
	}
	return r
}

// grepMaxLargeNames is the most names of skipped large files listed.
const grepMaxLargeNames = 10

// largeNote says which files a walk skipped for their size, or is "".
func (c *grepCollector) largeNote() string {
	n := len(c.large)
	if n == 0 {
		return ""
	}
	slices.Sort(c.large)
	names := c.large[:min(n, grepMaxLargeNames)]
	list := strings.Join(names, ", ")
	if n > len(names) {
		list += fmt.Sprintf(" and %d more", n-len(names))
	}
	return fmt.Sprintf("[Skipped %d %s larger than %s, not searched: %s.]", n, grepPlural(n, "file", "files"), grepSize(grepMaxFileSize), list)
}

// grepSize writes a size in bytes as "256 MB" when it is a whole number of
// MiB, else as "1000 bytes".
func grepSize(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// modeResult is result without the note of skipped files.
func (c *grepCollector) modeResult() tool.Result {
	q := c.q
	switch q.mode {
	case "count":
		slices.SortFunc(c.counts, func(a, b grepCount) int { return strings.Compare(a.name, b.name) })
		total := 0
		lines := make([]string, len(c.counts))
		for i, e := range c.counts {
			total += e.n
			lines[i] = fmt.Sprintf("%s:%d", e.name, e.n)
			if q.singleFile {
				lines[i] = fmt.Sprint(e.n)
			}
		}
		res := GrepCountResult{Mode: "count", NumFiles: len(c.counts), Filenames: []string{}, NumMatches: total}
		if len(lines) == 0 {
			r := tool.Text("No matches found")
			r.Structured = res
			return r
		}
		shown, note, lim, off := grepPaginate(lines, q.offset, q.limit, "counts")
		res.Content = strings.Join(shown, "\n")
		res.NumLines = len(shown)
		res.AppliedLimit, res.AppliedOffset = lim, off
		text := res.Content
		if text != "" {
			text += "\n\n"
		}
		text += fmt.Sprintf("Total: %d matching %s in %d %s.", total, grepPlural(total, "line", "lines"), len(c.counts), grepPlural(len(c.counts), "file", "files"))
		if note != "" {
			text += "\n" + note
		}
		r := tool.Text(text)
		r.Structured = res
		return r

	case "content":
		files := []contentFile(c.kept)
		slices.SortFunc(files, func(a, b contentFile) int { return strings.Compare(a.name, b.name) })
		sep := q.search.before > 0 || q.search.after > 0
		var all []string
		for i, f := range files {
			if i > 0 && sep {
				all = append(all, "--")
			}
			all = append(all, f.lines...)
		}
		total := c.totalL
		if sep && c.nFiles > 1 {
			total += c.nFiles - 1
		}
		res := GrepContentResult{Mode: "content", Filenames: []string{}, TotalLines: total}
		if total == 0 {
			r := tool.Text("No matches found")
			r.Structured = res
			return r
		}
		shown, note, lim, off := grepPaginateTotal(all, total, q.offset, q.limit, "lines")
		res.Content = strings.Join(shown, "\n")
		res.NumLines = len(shown)
		res.AppliedLimit, res.AppliedOffset = lim, off
		text := res.Content
		if note != "" {
			if text != "" {
				text += "\n\n"
			}
			text += note
		}
		r := tool.Text(text)
		r.Structured = res
		return r
	}

	sortByMtime(c.files)
	names := make([]string, len(c.files))
	for i, f := range c.files {
		names[i] = f.path
	}
	res := GrepFilesResult{Mode: "files_with_matches", Filenames: []string{}, TotalFiles: len(names)}
	if len(names) == 0 {
		r := tool.Text("No files found")
		r.Structured = res
		return r
	}
	shown, note, lim, off := grepPaginate(names, q.offset, q.limit, "files")
	res.Filenames = append(res.Filenames, shown...)
	res.NumFiles = len(shown)
	res.AppliedLimit, res.AppliedOffset = lim, off
	text := fmt.Sprintf("Found %d %s", len(names), grepPlural(len(names), "file", "files"))
	if len(shown) > 0 {
		text += "\n" + strings.Join(shown, "\n")
	}
	if note != "" {
		text += "\n\n" + note
	}
	r := tool.Text(text)
	r.Structured = res
	return r
}

// grepPaginate applies offset and limit (0: none) to items and describes what
// was left out. lim and off are set when they cut anything.
func grepPaginate(items []string, offset, limit int, unit string) (shown []string, note string, lim, off *int) {
	return grepPaginateTotal(items, len(items), offset, limit, unit)
}

// grepPaginateTotal is grepPaginate for a list of which only a prefix is held:
// total is the length of the whole list.
func grepPaginateTotal(items []string, total, offset, limit int, unit string) (shown []string, note string, lim, off *int) {
	from := min(offset, len(items))
	to := len(items)
	if limit > 0 && limit < to-from {
		to = from + limit
	}
	shown = items[from:to]
	end := offset + len(shown)
	switch {
	case offset == 0 && end >= total:
		return shown, "", nil, nil
	case len(shown) == 0:
		note = fmt.Sprintf("[No %s at offset %d: there are %d in all.]", unit, offset, total)
	case end < total:
		note = fmt.Sprintf("[Showing %s %d-%d of %d. Use offset %d to see more.]", unit, offset+1, end, total, end)
	default:
		note = fmt.Sprintf("[Showing %s %d-%d of %d.]", unit, offset+1, end, total)
	}
	if limit > 0 && end < total {
		lim = &limit
	}
	if offset > 0 {
		off = &offset
	}
	return shown, note, lim, off
}

func grepPlural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// grepReadPool recycles file buffers between the files of a search; no
// result keeps a reference into them.
var grepReadPool = sync.Pool{New: func() any { return new([]byte) }}

// errGrepSkip is returned by grepReadFile for binary files, which a search
// skips without a word, as ripgrep does.
var errGrepSkip = errors.New("file skipped")

// errGrepTooLarge is returned by grepReadFile for files larger than
// grepMaxFileSize, which a search skips and reports.
var errGrepTooLarge = errors.New("file larger than the search limit")

// grepReadFile reads the file at path into buf, grown as needed, for a
// search, or maps it when it has grepMapMin bytes or more (mapped is then
// set: the caller searches it under grepGuardFault and unmaps it). It
// returns errGrepTooLarge without reading when the file is larger than
// grepMaxFileSize (or once it has grown past it), and stops early with
// errGrepSkip when the file turns out to be binary (see isBinaryData), so
// that such files are not read whole. mtime is the file's modification
// time in milliseconds (0 when it could not be had), from the same fstat
// that gives the size.
func grepReadFile(path string, buf []byte) (data []byte, mtime int64, mapped bool, err error) {
	f, err := openGrepFile(path)
	if err != nil {
		return buf[:0], 0, false, err
	}
	defer f.close()
	buf = buf[:0]
	size, mtime, err := f.stat()
	if err == nil {
		if size > int64(grepMaxFileSize) {
			return buf, mtime, false, errGrepTooLarge
		}
		if size >= grepMapMin {
			if m, err := f.mmap(size); err == nil {
				var binary bool
				if err := grepGuardFault(func() error { binary = isBinaryData(m); return nil }); err != nil || binary {
					grepUnmap(m)
					return buf, mtime, false, errGrepSkip
				}
				return m, mtime, true, nil
			}
		}
	}
	if err != nil {
		size = -1
	}
	data, err = grepReadInto(f, buf, size)
	return data, mtime, false, err
}

// grepReadInto reads the file f into buf for grepReadFile. size is what
// fstat said of the file (-1: unknown): a short read that brings the
// bytes read to it is taken for the end of the file (a regular file
// returns fewer bytes than asked for only at its end), saving the read
// that would return 0. A file that grew since is read to its new end.
func grepReadInto(f grepFile, buf []byte, size int64) ([]byte, error) {
	if cap(buf) < 64<<10 {
		buf = make([]byte, 0, 64<<10)
	}
	checked := false
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		want := cap(buf) - len(buf)
		n, err := f.read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		switch {
		case err != nil:
			return buf, err
		case n == 0, n < want && int64(len(buf)) == size:
			if !checked && isBinaryData(buf) {
				return buf, errGrepSkip
			}
			return buf, nil
		case len(buf) > grepMaxFileSize:
			return buf, errGrepTooLarge
		case !checked && len(buf) >= 8<<10:
			// isBinaryData looks at the first 8 KB only.
			checked = true
			if isBinaryData(buf) {
				return buf, errGrepSkip
			}
		}
	}
}
