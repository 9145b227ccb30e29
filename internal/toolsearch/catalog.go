package toolsearch

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/agentloop/agentloop/tool"
)

// DefaultMaxResults is how many tools a keyword search returns when the
// call does not say.
const DefaultMaxResults = 5

// SelectPrefix starts a query that names the tools to load, separated by
// commas: "select:mcp__db__query,mcp__db__schema".
const SelectPrefix = "select:"

// Catalog holds a session's deferred tools. It is safe for concurrent
// use; only Replace changes it.
//
// Catalogs of the same deferred tools share their entries and index (see
// baseCache) until one of them is changed: Replace copies first.
type Catalog struct {
	mu    sync.RWMutex
	tools []entry
	index map[string]int
	// shared: tools and index belong to base, which other catalogs use
	// too; they are never written, only replaced (and base dropped).
	shared bool
	base   *catalogBase
	// ann is the Announcement of the catalog as it is, once made; Replace
	// drops it and counts a new version, so that a text made while Replace
	// ran is not kept.
	ann *string
	ver uint64
}

type entry struct {
	info  tool.Info
	name  string   // lower case
	words []string // name split into words, lower case
	desc  string   // lower case
	hint  string   // the search hint, lower case
}

// NewCatalog returns a catalog of the deferred tools, in the given order;
// a repeated name keeps its first definition. It keeps no reference to
// deferred.
func NewCatalog(deferred []tool.Info) *Catalog {
	if b := lookupBase(deferred); b != nil {
		return &Catalog{tools: b.tools, index: b.index, shared: true, base: b}
	}
	c := &Catalog{index: map[string]int{}}
	c.add(deferred)
	if b := storeBase(deferred, c); b != nil {
		c.shared, c.base = true, b
	}
	return c
}

// maxBases bounds the process-wide cache of catalog bases: distinct sets
// of deferred tools (one per kind of session, more with MCP servers whose
// tools differ). Past it, catalogs are built for each session again.
const maxBases = 32

// baseCache holds the entries and index of the catalogs built so far, by
// the deferred tools they were built from, so that the many sessions of a
// process that defer the same tools share one copy. Its values are never
// changed.
var baseCache struct {
	sync.Mutex
	list []*catalogBase
}

type catalogBase struct {
	from  []tool.Info // what the base was built from, compared in full
	tools []entry     // capacity clipped: an append copies
	index map[string]int
	// ann is the Announcement of the base's tools, made by the first
	// catalog that needs it and shared by all while they keep the base.
	ann atomic.Pointer[string]
}

// lookupBase returns the base built from exactly deferred, or nil.
func lookupBase(deferred []tool.Info) *catalogBase {
	baseCache.Lock()
	defer baseCache.Unlock()
	for _, b := range baseCache.list {
		if slices.EqualFunc(b.from, deferred, sameInfo) {
			return b
		}
	}
	return nil
}

// storeBase adds c, just built from deferred, to the cache, and reports
// whether it did.
func storeBase(deferred []tool.Info, c *Catalog) *catalogBase {
	baseCache.Lock()
	defer baseCache.Unlock()
	if len(baseCache.list) >= maxBases {
		return nil
	}
	c.tools = slices.Clip(c.tools)
	b := &catalogBase{from: slices.Clone(deferred), tools: c.tools, index: c.index}
	baseCache.list = append(baseCache.list, b)
	return b
}

// sameInfo reports whether a and b declare the same tool in every field.
func sameInfo(a, b tool.Info) bool {
	return a.Name == b.Name && a.Description == b.Description && string(a.InputSchema) == string(b.InputSchema) &&
		a.ReadOnly == b.ReadOnly && a.AlwaysReportError == b.AlwaysReportError && a.MaxResultChars == b.MaxResultChars &&
		a.Defer == b.Defer && a.MCP == b.MCP && a.AlwaysLoad == b.AlwaysLoad && a.SearchHint == b.SearchHint &&
		a.RequiresUserInteraction == b.RequiresUserInteraction && a.PermissionPolicy == b.PermissionPolicy
}

// add appends the tools not in the catalog yet; c.mu is held or c is new.
func (c *Catalog) add(deferred []tool.Info) {
	for _, in := range deferred {
		if _, dup := c.index[in.Name]; dup {
			continue
		}
		c.index[in.Name] = len(c.tools)
		f := foldedOf(in)
		c.tools = append(c.tools, entry{info: in, name: f.name, words: f.words, desc: f.desc, hint: f.hint})
	}
}

// folded is the lower-case text of a tool the search matches against.
type folded struct {
	name  string
	words []string
	desc  string
	hint  string
}

// foldedKey names a tool's searchable text.
type foldedKey struct{ name, desc, hint string }

// maxFolded bounds the process-wide cache of folded text: past it (a
// process that has seen that many distinct deferred tools), text is
// folded for each catalog again.
const maxFolded = 4096

// foldedCache holds the folded text of the deferred tools seen so far, so
// that the many sessions of a process, which defer the same built-in and
// MCP tools, fold each text once. Its values are never changed.
var foldedCache struct {
	sync.RWMutex
	m map[foldedKey]*folded
}

// foldedOf returns the folded text of in, from the cache when it is there.
func foldedOf(in tool.Info) *folded {
	k := foldedKey{in.Name, in.Description, in.SearchHint}
	foldedCache.RLock()
	f := foldedCache.m[k]
	foldedCache.RUnlock()
	if f != nil {
		return f
	}
	f = &folded{name: strings.ToLower(in.Name), words: nameWords(in.Name),
		desc: strings.ToLower(in.Description), hint: strings.ToLower(in.SearchHint)}
	foldedCache.Lock()
	defer foldedCache.Unlock()
	if foldedCache.m == nil {
		foldedCache.m = map[foldedKey]*folded{}
	}
	if len(foldedCache.m) < maxFolded {
		foldedCache.m[k] = f
	}
	return f
}

// Replace removes the tools named in remove, then adds those of add that
// are not in the catalog (at the end, in the given order). It is how a
// session's deferred tools follow an MCP server whose tools changed.
func (c *Catalog) Replace(remove []string, add []tool.Info) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shared {
		c.tools, c.shared, c.base = slices.Clone(c.tools), false, nil
	}
	c.ann = nil
	c.ver++
	gone := map[string]bool{}
	for _, n := range remove {
		gone[n] = true
	}
	c.tools = slices.DeleteFunc(c.tools, func(e entry) bool { return gone[e.info.Name] })
	c.index = make(map[string]int, len(c.tools))
	for i, e := range c.tools {
		c.index[e.info.Name] = i
	}
	c.add(add)
}

// Len is the number of deferred tools; a nil catalog has none.
func (c *Catalog) Len() int {
	if c == nil {
		return 0
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.tools)
}

// Names returns the deferred tools' names in catalog order.
func (c *Catalog) Names() []string {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, len(c.tools))
	for i, e := range c.tools {
		out[i] = e.info.Name
	}
	return out
}

// Lookup returns the definition of the deferred tool called name.
func (c *Catalog) Lookup(name string) (tool.Info, bool) {
	if c == nil {
		return tool.Info{}, false
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, ok := c.index[name]
	if !ok {
		return tool.Info{}, false
	}
	return c.tools[i].info, true
}

// Search returns the deferred tools that match query, best first.
//
// A query that starts with SelectPrefix names tools: each comma-separated
// name that is in the catalog is returned (an exact match, else the one
// match ignoring case), in the order named, and max does not apply.
//
// Any other query is keywords, matched ignoring case against the tools'
// names, search hints (tool.Info.SearchHint) and descriptions, and ranked
// by the sum of three scores. In the name, a keyword equal to the whole
// name counts 12, one equal to a word of the name (names split at "_",
// "-", "." and lower-to-upper case changes) 8, one found inside the name
// 4. In the search hint, a word of the hint counts 4 and text inside it
// 2: a hint is written for searching, so it counts more than the
// description, where a word counts 2 and text inside it 1.
// A keyword written "+word" is required: tools without it are left out.
// Ties keep catalog order. At most max tools are returned; max <= 0
// means DefaultMaxResults.
func (c *Catalog) Search(query string, max int) []tool.Info {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	q := strings.TrimSpace(query)
	if rest, ok := cutPrefixFold(q, SelectPrefix); ok {
		return c.selectNames(rest)
	}
	if max <= 0 {
		max = DefaultMaxResults
	}
	var terms, required []string
	for _, f := range strings.Fields(strings.ToLower(q)) {
		if t, ok := strings.CutPrefix(f, "+"); ok {
			if t != "" {
				required = append(required, t)
				terms = append(terms, t)
			}
			continue
		}
		terms = append(terms, f)
	}
	type hit struct {
		i, score int
	}
	var hits []hit
	for i, e := range c.tools {
		if !slices.ContainsFunc(required, func(t string) bool { return e.score(t) == 0 }) {
			s := 0
			for _, t := range terms {
				s += e.score(t)
			}
			if s > 0 {
				hits = append(hits, hit{i, s})
			}
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.score, a.score) })
	out := make([]tool.Info, 0, min(max, len(hits)))
	for _, h := range hits[:min(max, len(hits))] {
		out = append(out, c.tools[h.i].info)
	}
	return out
}

func (c *Catalog) selectNames(list string) []tool.Info {
	var out []tool.Info
	seen := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		i, ok := c.index[n]
		if !ok {
			i, ok = c.foldIndex(n)
		}
		if ok && !seen[c.tools[i].info.Name] {
			seen[c.tools[i].info.Name] = true
			out = append(out, c.tools[i].info)
		}
	}
	return out
}

// foldIndex finds the one tool whose name equals n ignoring case.
func (c *Catalog) foldIndex(n string) (int, bool) {
	found := -1
	for i, e := range c.tools {
		if strings.EqualFold(e.info.Name, n) {
			if found >= 0 {
				return 0, false
			}
			found = i
		}
	}
	return found, found >= 0
}

// score is how well one lower-case keyword matches the tool.
func (e *entry) score(t string) int {
	s := 0
	switch {
	case e.name == t:
		s += 12
	case slices.Contains(e.words, t):
		s += 8
	case strings.Contains(e.name, t):
		s += 4
	}
	switch {
	case e.hint == "":
	case slices.Contains(strings.FieldsFunc(e.hint, notWordRune), t):
		s += 4
	case strings.Contains(e.hint, t):
		s += 2
	}
	switch {
	case slices.Contains(strings.FieldsFunc(e.desc, notWordRune), t):
		s += 2
	case strings.Contains(e.desc, t):
		s++
	}
	return s
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }

// nameWords splits a tool name into lower-case words: at "_", "-", "."
// and where a lower-case letter or digit is followed by an upper-case one
// ("mcp__github__createIssue" → mcp, github, create, issue).
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range name {
		switch {
		case notWordRune(r):
			flush()
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return words
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// Infos returns the deferred tools' definitions in catalog order.
func (c *Catalog) Infos() []tool.Info {
	if c == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]tool.Info, len(c.tools))
	for i, e := range c.tools {
		out[i] = e.info
	}
	return out
}
