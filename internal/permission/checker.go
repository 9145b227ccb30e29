package permission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Config is the starting configuration of a Checker.
type Config struct {
	// Mode is the permission mode ("" means default).
	Mode Mode
	// Rules are the allow, deny and ask rules by source. The Checker
	// keeps them (its changes work on a copy): the caller must not change
	// them after New.
	Rules RuleSet
	// Dirs are the working directories: the session's working directory
	// first, then the additional directories. They must be absolute.
	Dirs []string
	// Home is the home directory for "~" ("" means os.UserHomeDir).
	Home string
	// Classifier decides calls that would be asked in auto mode; nil
	// means such calls are asked.
	Classifier Classifier
	// AllowBypass makes a later switch to bypassPermissions possible when
	// the session did not start in that mode (the reference's
	// allowDangerouslySkipPermissions).
	AllowBypass bool
	// Disabled are modes the session may neither start in nor switch to
	// (settings' disableBypassPermissionsMode, disableAutoMode), each
	// with the error to return for it.
	Disabled map[Mode]error
	// Block fences the file tools into the working directories (see
	// Block); the zero value fences nothing.
	Block Block
	// NoPrompt records permissions.denyInsteadOfPrompting for the caller
	// that would put Ask decisions to a person (see Checker.NoPrompt).
	NoPrompt bool
	// ClassifyAllShell (the settings' autoMode.classifyAllShell) sends
	// every shell command to the Classifier in auto mode, even one an
	// allow rule covers: such rules approve nothing while auto mode is on.
	ClassifyAllShell bool
	// Protected are more paths (files, or directories with all beneath
	// them) that are protected like .git and .claude: the settings files
	// the session read, the managed-settings path, the user's
	// configuration directory. They must be absolute. The Checker keeps
	// the slice until its first use resolves their links: the caller must
	// not change it.
	Protected []string
}

// Call is one tool call to decide on.
type Call struct {
	Tool  string          // the tool's name as the model called it
	Input json.RawMessage // the validated input object
	// ReadOnly is the tool's own read-only annotation. It lets tools this
	// package does not know run without asking; built-in tools and MCP
	// tools are judged by their own rules instead.
	ReadOnly bool
	// Cwd is the directory a shell command starts in (the Bash tool's
	// current directory); "" means the session's working directory.
	Cwd string
	// RequiresUserInteraction marks tools that always need a person (an
	// MCP tool's requiresUserInteraction).
	RequiresUserInteraction bool
}

// Checker decides tool calls. It is safe for concurrent use: Decide reads
// an immutable snapshot, and Apply / SetMode swap in a new one.
//
// A Checker compiles its rules twice: in New, which reports what is wrong
// with them, and again at its first use (state); in between it keeps only
// its configuration, so that a session that never decides anything (an
// idle Client) does not keep the compiled form. The working directories'
// physical forms are resolved at that first use.
type Checker struct {
	mu    sync.Mutex // serializes changes
	cur   atomic.Pointer[state]
	ready sync.Once // compiles the first state (state)
}

// state is the current state, the first one compiled by the first call.
func (c *Checker) state() *state {
	c.ready.Do(func() {
		// Every change goes through here first, so the first state is
		// still the current one; the accessors that need nothing
		// compiled (Mode, Dirs, Rules, Warnings, NoPrompt) may be reading
		// it, so the compiled state is a new one.
		n := *c.cur.Load()
		for _, p := range n.protectIn {
			if filepath.IsAbs(p) {
				n.protected = addUnique(n.protected, filepath.Clean(p), resolvePhysical(filepath.Clean(p)))
			}
		}
		n.protectIn = nil
		_ = n.rebuild() // its errors were New's
		c.cur.Store(&n)
	})
	return c.cur.Load()
}

// Prepare compiles the checker's rules now if no decision has yet: for a
// caller about to run tool calls from a shallow point of its stack. The
// first compilation resolves paths and builds patterns, which takes more
// stack than a decision does, and a decision is made deep in a turn's
// stack (under the loop's dispatch): compiled there, every session's
// goroutine would grow its stack for it once and keep the larger stack.
func (c *Checker) Prepare() { c.state() }

// state is one immutable configuration of a Checker.
type state struct {
	mode        Mode
	dirs        []string // cleaned working directories, the session's first
	dirForms    []string // dirs and their physical forms
	rules       RuleSet
	compiled    []*rule
	readDeny    [len(readTools)][]*rule // deny rules on reading, by tool of readTools (see readDenyRules)
	warnings    []string
	home        string
	fold        bool
	classifier  Classifier
	allowBypass bool
	disabled    map[Mode]error // never changed after New
	noReadOnly  bool           // tests: no built-in read-only commands
	block       *blockForms    // nil when nothing is fenced (block.go); never changed after New
	noPrompt    bool           // never changed after New
	classifyAll bool           // ClassifyAllShell; never changed after New
	protected   []string       // Config.Protected, clean, with their physical forms: made by the first use (Checker.state); never changed after
	protectIn   []string       // Config.Protected as given, until then (the caller's: never changed)
}

// New builds a Checker. Malformed rules are left out and reported in the
// error, which joins one *RuleError per rule; the Checker returned is
// usable even then, so a caller may choose to warn and go on. Any other
// error (a bad mode, a relative directory) returns a nil Checker.
func New(cfg Config) (*Checker, error) {
	mode, err := ParseMode(string(cfg.Mode))
	if err != nil {
		return nil, err
	}
	if err := cfg.Disabled[mode]; err != nil {
		return nil, err
	}
	home := cfg.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		home = filepath.Clean(home)
	}
	st := &state{
		mode:        mode,
		rules:       cfg.Rules, // changes clone it first (state.clone)
		home:        home,
		fold:        runtime.GOOS == "darwin" || runtime.GOOS == "windows",
		classifier:  cfg.Classifier,
		allowBypass: cfg.AllowBypass || mode == ModeBypass,
		disabled:    cloneDisabled(cfg.Disabled),
		block:       newBlockForms(cfg.Block),
		noPrompt:    cfg.NoPrompt,
		classifyAll: cfg.ClassifyAllShell,
	}
	st.protectIn = cfg.Protected
	for _, d := range cfg.Dirs {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("permission: working directory %q is not absolute", d)
		}
		st.dirs = addUnique(st.dirs, filepath.Clean(d))
	}
	// The rules are checked for their errors and warnings only, without
	// the file system: the first use (Checker.state) compiles them and
	// keeps them, with what else derives from the dirs (rebuild).
	warnings, ruleErr := st.rules.check(st.cwd(), st.home, st.fold)
	st.warnings = warnings
	c := &Checker{}
	c.cur.Store(st)
	return c, ruleErr
}

// cloneDisabled is a copy of m, nil when m is empty.
func cloneDisabled(m map[Mode]error) map[Mode]error {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

// rebuild recomputes what derives from the dirs and rules.
func (st *state) rebuild() error {
	st.dirForms = nil
	for _, d := range st.dirs {
		st.dirForms = addUnique(st.dirForms, d, resolvePhysical(d))
	}
	var err error
	st.compiled, st.warnings, err = st.rules.compile(st.cwd(), st.home, st.fold)
	st.buildReadDeny()
	return err
}

func (st *state) cwd() string {
	if len(st.dirs) == 0 {
		return ""
	}
	return st.dirs[0]
}

func (st *state) clone() *state {
	n := *st
	n.dirs = slices.Clone(st.dirs)
	n.rules = st.rules.Clone()
	return &n
}

// Decide judges one tool call. The caller runs PreToolUse hooks before it
// and asks canUseTool (or refuses, when nobody can be asked) when it
// returns Ask.
func (c *Checker) Decide(ctx context.Context, call Call) Decision {
	st := c.state()
	return st.decideWith(ctx, &call, decodeInput(call.Input)) // as st.decide, a frame less deep
}

// Mode returns the current permission mode.
func (c *Checker) Mode() Mode { return c.cur.Load().mode }

// Dirs returns the working directories, the session's first.
func (c *Checker) Dirs() []string { return slices.Clone(c.cur.Load().dirs) }

// Rules returns a copy of the current rule set.
func (c *Checker) Rules() RuleSet { return c.cur.Load().rules.Clone() }

// Warnings lists the rules that are accepted but have no effect.
func (c *Checker) Warnings() []string { return slices.Clone(c.cur.Load().warnings) }

// SetMode changes the permission mode.
func (c *Checker) SetMode(m Mode) error {
	return c.Apply(Update{Type: UpdateSetMode, Mode: m, Destination: SourceSession})
}

// Apply applies permission updates (the user's "always allow", a
// set_permission_mode request, …) to the in-memory configuration, all or
// none: on error nothing changes. Writing settings files for the
// persistent destinations is the caller's job.
func (c *Checker) Apply(updates ...Update) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state().clone()
	for _, u := range updates {
		if err := st.apply(u); err != nil {
			return err
		}
	}
	if err := st.rebuild(); err != nil {
		return err
	}
	c.cur.Store(st)
	return nil
}

func (st *state) apply(u Update) error {
	if err := u.Validate(); err != nil {
		return err
	}
	switch u.Type {
	case UpdateSetMode:
		m, _ := ParseMode(string(u.Mode))
		if err := st.disabled[m]; err != nil {
			return err
		}
		if m == ModeBypass && !st.allowBypass {
			return errors.New("permission: bypassPermissions was not enabled for this session")
		}
		st.mode = m
	case UpdateAddDirectories:
		for _, d := range u.Directories {
			abs, err := absolute(st.cwd(), st.home, d)
			if err != nil {
				return err
			}
			st.dirs = addUnique(st.dirs, filepath.Clean(abs))
		}
	case UpdateRemoveDirectories:
		for _, d := range u.Directories {
			abs, err := absolute(st.cwd(), st.home, d)
			if err != nil {
				return err
			}
			abs = filepath.Clean(abs)
			if len(st.dirs) > 0 && abs == st.dirs[0] {
				return errors.New("permission: the session's working directory cannot be removed")
			}
			st.dirs = slices.DeleteFunc(st.dirs, func(x string) bool { return x == abs })
		}
	default:
		return st.rules.Apply(u)
	}
	return nil
}

func joinErrors(errs []error) error { return errors.Join(errs...) }

// insideAll reports whether every candidate lies in a working directory.
// A candidate that does not, by its name, still counts when its parent
// directory does once its links are resolved: a working directory given
// as /private/tmp/w contains /tmp/w/f when /tmp links to /private/tmp.
// (The file's own last component is not resolved: a link that lies
// outside stays outside, whatever it points to, and its target is a
// candidate of its own.)
func (st *state) insideAll(cands []string) bool {
	if len(cands) == 0 {
		return false
	}
	for _, c := range cands {
		if !st.inside(c) {
			return false
		}
	}
	return true
}

// inside reports whether the absolute, clean path p lies in a working
// directory, by name or through the physical form of its parent.
func (st *state) inside(p string) bool {
	if st.insideByName(p) {
		return true
	}
	parent := filepath.Dir(p)
	if parent == p {
		return false
	}
	phys := resolvePhysical(parent)
	if phys == parent {
		return false
	}
	return st.insideByName(filepath.Join(phys, filepath.Base(p)))
}

func (st *state) insideByName(p string) bool {
	for _, d := range st.dirForms {
		if within(d, p, st.fold) {
			return true
		}
	}
	return false
}

// critical reports whether removing p would remove the file system root,
// a top-level directory, the home directory or its parent, or a working
// directory or one of its ancestors.
func (st *state) critical(p string) bool {
	if p == "/" || filepath.Dir(p) == "/" {
		return true
	}
	if st.home != "" && (within(p, st.home, st.fold)) {
		return true
	}
	for _, d := range st.dirForms {
		if within(p, d, st.fold) {
			return true
		}
	}
	return false
}

// isProtected reports whether writing p touches a protected path: one
// protected by name (see the package-level isProtected) or one of
// Config.Protected.
func (st *state) isProtected(p string) bool {
	return isProtected(p, st.fold) || st.withinAny(st.protected, p)
}

func (st *state) anyProtected(cands []string) bool {
	for _, c := range cands {
		if st.isProtected(c) {
			return true
		}
	}
	return false
}
