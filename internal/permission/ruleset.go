package permission

import (
	"fmt"
	"slices"
	"sync"
)

// Source is where a rule comes from (the reference's rule sources; the
// update destinations are a subset).
type Source string

// Rule sources.
const (
	SourceSession Source = "session"         // this session only (memory)
	SourceCLI     Source = "cliArg"          // --allowedTools / --disallowedTools, SDK options
	SourceUser    Source = "userSettings"    // ~/.claude/settings.json
	SourceProject Source = "projectSettings" // .claude/settings.json
	SourceLocal   Source = "localSettings"   // .claude/settings.local.json
	SourceFlag    Source = "flagSettings"    // --settings
	SourcePolicy  Source = "policySettings"  // managed policy
	SourceCommand Source = "command"         // a slash command's allowed-tools
)

// SourceRules are the rules of one source. BaseDir is the directory that
// "/path" specifiers of Read and Edit rules are relative to: the project
// root for project and local settings, ~/.claude for user settings, the
// directory of a --settings file; empty means the working directory
// (session and CLI rules).
type SourceRules struct {
	Source  Source   `json:"source"`
	BaseDir string   `json:"baseDir,omitempty"`
	Allow   []string `json:"allow,omitempty"`
	Deny    []string `json:"deny,omitempty"`
	Ask     []string `json:"ask,omitempty"`
}

func (s *SourceRules) list(b Behavior) *[]string {
	switch b {
	case Allow:
		return &s.Allow
	case Deny:
		return &s.Deny
	case Ask:
		return &s.Ask
	}
	return nil
}

// RuleSet holds the rule text of every source. The zero value is an empty
// set ready to use. A RuleSet is a plain value: copy it with Clone before
// changing a shared one.
type RuleSet struct {
	Sources []SourceRules `json:"sources"`
}

// Clone returns a deep copy.
func (rs RuleSet) Clone() RuleSet {
	out := RuleSet{Sources: make([]SourceRules, len(rs.Sources))}
	for i, s := range rs.Sources {
		s.Allow, s.Deny, s.Ask = slices.Clone(s.Allow), slices.Clone(s.Deny), slices.Clone(s.Ask)
		out.Sources[i] = s
	}
	return out
}

// source returns the rules of src, adding an empty entry if there is none.
func (rs *RuleSet) source(src Source) *SourceRules {
	for i := range rs.Sources {
		if rs.Sources[i].Source == src {
			return &rs.Sources[i]
		}
	}
	rs.Sources = append(rs.Sources, SourceRules{Source: src})
	return &rs.Sources[len(rs.Sources)-1]
}

// Add appends rules of one behavior to a source. Rules already present
// (in canonical text) are not added twice.
func (rs *RuleSet) Add(src Source, b Behavior, rules ...RuleValue) error {
	l := rs.source(src).list(b)
	if l == nil {
		return fmt.Errorf("permission: unknown rule behavior %q", b)
	}
	for _, r := range rules {
		s := r.String()
		if !slices.Contains(*l, s) {
			*l = append(*l, s)
		}
	}
	return nil
}

// Replace sets the rules of one behavior of a source.
func (rs *RuleSet) Replace(src Source, b Behavior, rules ...RuleValue) error {
	l := rs.source(src).list(b)
	if l == nil {
		return fmt.Errorf("permission: unknown rule behavior %q", b)
	}
	*l = nil
	return rs.Add(src, b, rules...)
}

// Remove deletes rules of one behavior from a source, comparing canonical
// text (so "Bash(ls)" removes a rule written as " Bash(ls) ").
func (rs *RuleSet) Remove(src Source, b Behavior, rules ...RuleValue) error {
	l := rs.source(src).list(b)
	if l == nil {
		return fmt.Errorf("permission: unknown rule behavior %q", b)
	}
	drop := map[string]bool{}
	for _, r := range rules {
		drop[r.String()] = true
	}
	*l = slices.DeleteFunc(*l, func(s string) bool {
		v, err := ParseRule(s)
		return drop[s] || err == nil && drop[v.String()]
	})
	return nil
}

// compile parses and compiles every rule. Malformed rules are left out
// and reported together in the error.
func (rs RuleSet) compile(cwd, home string, fold bool) ([]*rule, []string, error) {
	return rs.compileAs(cwd, home, fold, false)
}

// check is compile for the errors and warnings alone: path rules are
// compiled without looking up the links of their bases.
func (rs RuleSet) check(cwd, home string, fold bool) ([]string, error) {
	_, warnings, err := rs.compileAs(cwd, home, fold, true)
	return warnings, err
}

func (rs RuleSet) compileAs(cwd, home string, fold, lexical bool) ([]*rule, []string, error) {
	var rules []*rule
	var warnings []string
	var errs []error
	for _, s := range rs.Sources {
		bases := pathBases{cwd: cwd, source: s.BaseDir, home: home, lexical: lexical}
		for _, b := range []Behavior{Deny, Ask, Allow} {
			for _, text := range *s.list(b) {
				r, err := compileCached(text, b, s.Source, bases, fold)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if r.Warning != "" {
					warnings = append(warnings, r.Warning)
				}
				rules = append(rules, r)
			}
		}
	}
	return rules, warnings, joinErrors(errs)
}

// ruleKey names a compiled rule: its text and everything compiling it
// depends on.
type ruleKey struct {
	text  string
	b     Behavior
	src   Source
	bases pathBases
	fold  bool
}

// maxCachedRules bounds the process-wide cache of compiled rules: past it
// rules are compiled for each checker again.
const maxCachedRules = 8192

// ruleCache holds compiled rules for the many sessions of a process, which
// mostly compile the same rules. A compiled rule is never changed once
// made, so checkers share it. Path rules are not kept: compiling one
// resolves the links of its base directory as they are now, and a
// session must see the file system of its own start.
var ruleCache struct {
	sync.RWMutex
	m map[ruleKey]*rule
}

// compileCached parses and compiles text, or returns the rule compiled
// from the same input before. Errors are not cached.
func compileCached(text string, b Behavior, src Source, bases pathBases, fold bool) (*rule, error) {
	k := ruleKey{text, b, src, bases, fold}
	// Only path rules depend on lexical, and they are never kept: the
	// check New makes and the first use share the rules they both compile.
	k.bases.lexical = false
	ruleCache.RLock()
	r := ruleCache.m[k]
	ruleCache.RUnlock()
	if r != nil {
		return r, nil
	}
	v, err := ParseRule(text)
	if err != nil {
		return nil, err
	}
	if r, err = compileRule(v, b, src, bases, fold); err != nil {
		return nil, err
	}
	if r.path != nil {
		return r, nil
	}
	ruleCache.Lock()
	defer ruleCache.Unlock()
	if ruleCache.m == nil {
		ruleCache.m = map[ruleKey]*rule{}
	}
	if r.path == nil && len(ruleCache.m) < maxCachedRules {
		ruleCache.m[k] = r
	}
	return r, nil
}
