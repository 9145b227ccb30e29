package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/agentloop/agentloop/internal/vocab"
)

// Source names where a setting or rule came from. The file sources are
// also the destinations of a [PermissionUpdate]; Session and CLIArg name
// rules that live only in memory.
type Source string

// The sources, with the names the reference uses for rule sources and
// update destinations.
const (
	UserSettings    Source = "userSettings"    // ~/.claude/settings.json
	ProjectSettings Source = "projectSettings" // <cwd>/.claude/settings.json
	LocalSettings   Source = "localSettings"   // <cwd>/.claude/settings.local.json
	FlagSettings    Source = "flagSettings"    // the --settings value
	PolicySettings  Source = "policySettings"  // the managed-policy file
	Session         Source = "session"         // in memory, for this session only
	CLIArg          Source = "cliArg"          // command-line rules such as --allowedTools
)

// SettingSource selects a settings file to load, as the SDK's
// settingSources option does.
type SettingSource string

// The selectable file sources.
const (
	User    SettingSource = "user"    // ~/.claude/settings.json
	Project SettingSource = "project" // <cwd>/.claude/settings.json
	Local   SettingSource = "local"   // <cwd>/.claude/settings.local.json
)

// DefaultManagedPath is where the managed-policy file is looked for when
// Options.ManagedPath is empty.
func DefaultManagedPath() string {
	switch runtime.GOOS {
	case "darwin":
		return "/Library/Application Support/ClaudeCode/managed-settings.json"
	case "windows":
		return `C:\Program Files\ClaudeCode\managed-settings.json`
	default:
		return "/etc/claude-code/managed-settings.json"
	}
}

// Options say where the settings files are and which of them to load.
// The zero value loads the user, project and local files of the process's
// working directory and home, and the managed policy.
type Options struct {
	// Cwd is the project directory; empty means the process's working
	// directory.
	Cwd string
	// Home is the user's home directory; empty means os.UserHomeDir.
	Home string
	// ConfigDir holds the user settings file; empty means
	// $CLAUDE_CONFIG_DIR, or Home/.claude when that is unset.
	ConfigDir string
	// ManagedPath is the managed-policy file; empty means
	// DefaultManagedPath(). A missing file is not an error.
	ManagedPath string
	// Sources selects the file sources to load. Nil loads all three;
	// an empty non-nil slice loads none. The managed policy and Flag load
	// regardless.
	Sources []SettingSource
	// Flag is the --settings value: a path to a JSON file (relative to
	// Cwd), or inline JSON when it starts with "{". Empty means none.
	Flag string
}

// resolved fills in the defaults of o.
func (o Options) resolved() (Options, error) {
	if o.Cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return o, fmt.Errorf("settings: working directory: %w", err)
		}
		o.Cwd = wd
	}
	if o.Home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			o.Home = h
		}
	}
	if o.ConfigDir == "" {
		if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
			o.ConfigDir = d
		} else if o.Home != "" {
			o.ConfigDir = filepath.Join(o.Home, ".claude")
		}
	}
	if o.ManagedPath == "" {
		o.ManagedPath = DefaultManagedPath()
	}
	return o, nil
}

// Path returns the file that holds the settings of a file source:
// UserSettings, ProjectSettings, LocalSettings, PolicySettings, or
// FlagSettings when Flag names a file.
func (o Options) Path(s Source) (string, error) {
	o, err := o.resolved()
	if err != nil {
		return "", err
	}
	switch s {
	case UserSettings:
		if o.ConfigDir == "" {
			return "", errors.New("settings: no home directory for user settings")
		}
		return filepath.Join(o.ConfigDir, "settings.json"), nil
	case ProjectSettings:
		return filepath.Join(o.Cwd, ".claude", "settings.json"), nil
	case LocalSettings:
		return filepath.Join(o.Cwd, ".claude", "settings.local.json"), nil
	case PolicySettings:
		return o.ManagedPath, nil
	case FlagSettings:
		if o.Flag == "" || isInline(o.Flag) {
			return "", fmt.Errorf("settings: --settings is not a file")
		}
		return o.abs(o.Flag), nil
	}
	return "", fmt.Errorf("settings: %q is not a settings file", s)
}

func (o Options) abs(p string) string {
	if strings.HasPrefix(p, "~/") && o.Home != "" {
		return filepath.Join(o.Home, p[2:])
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(o.Cwd, p)
	}
	return filepath.Clean(p)
}

// display is how error messages name a file: relative to the project for
// project files, with ~ for files in the home directory.
func (o Options) display(s Source, path string) string {
	switch s {
	case ProjectSettings, LocalSettings:
		if rel, err := filepath.Rel(o.Cwd, path); err == nil && !strings.HasPrefix(rel, "..") {
			return rel
		}
	case FlagSettings:
		if path == "" {
			return "--settings"
		}
		return o.Flag
	case UserSettings:
		if o.Home != "" {
			if rel, err := filepath.Rel(o.Home, path); err == nil && !strings.HasPrefix(rel, "..") {
				return "~/" + filepath.ToSlash(rel)
			}
		}
	}
	return path
}

func isInline(flag string) bool { return strings.HasPrefix(strings.TrimSpace(flag), "{") }

// Behavior is what a permission rule does to a matching tool call.
type Behavior string

// The rule behaviors.
const (
	Allow = Behavior(vocab.Allow)
	Deny  = Behavior(vocab.Deny)
	Ask   = Behavior(vocab.Ask)
)

// Rule is one permission rule with where it came from.
type Rule struct {
	// Value is the rule as written: "Bash", "Bash(npm test:*)",
	// "Read(/src/**)".
	Value    string
	Behavior Behavior
	Source   Source
	// File is the settings file the rule was read from ("" for inline
	// --settings JSON).
	File string
	// Root is the directory a "/path" in the rule is relative to: the
	// project directory for project and local settings and inline
	// --settings, the config directory (~/.claude) for user settings, and
	// the file's directory for a --settings file and the managed policy.
	Root string
}

// ToolName is the tool part of the rule: "Bash" for "Bash(npm test:*)".
func (r Rule) ToolName() string { return ParseRule(r.Value).ToolName }

// Content is the part in parentheses, and whether there was one that
// narrows the rule ("Bash()" and "Bash(*)" do not).
func (r Rule) Content() (string, bool) {
	v := ParseRule(r.Value)
	return v.RuleContent, v.RuleContent != ""
}

// Directory is an additional working directory granted by a settings
// file.
type Directory struct {
	Path   string // absolute
	Source Source
}

// Permissions are the merged permission settings.
type Permissions struct {
	Allow []Rule
	Deny  []Rule
	Ask   []Rule
	// DefaultMode is the permission mode to start in ("" when no file
	// sets one); "manual" is read as "default". DefaultModeSource says
	// which file set it.
	DefaultMode       string
	DefaultModeSource Source
	// AdditionalDirectories grant file access beyond the working
	// directory.
	AdditionalDirectories []Directory
	// DisableBypassPermissionsMode is non-nil when a file sets
	// permissions.disableBypassPermissionsMode to "disable": no session
	// may start in, or switch to, bypassPermissions. DisableAutoMode is
	// the same for permissions.disableAutoMode and auto. Any source may
	// set them and none can unset them: a file can only tighten. When
	// several files disable a mode, the field names the one of highest
	// precedence (the managed policy before all others).
	DisableBypassPermissionsMode *ModeDisable
	DisableAutoMode              *ModeDisable
	// BlockWritesOutsideWorkingDirectories is non-nil when a file sets
	// permissions.blockWritesOutsideWorkingDirectories to true: the file
	// tools (Write, Edit, MultiEdit, NotebookEdit) may not write outside
	// the working directories, nor to a settings file anywhere, in any
	// permission mode, whatever a rule, hook or callback says. Any source
	// may set it and none can unset it; the field names the highest
	// source that sets it.
	BlockWritesOutsideWorkingDirectories *Switch
	// BlockReadsOutsideWorkingDirectories is the same for
	// permissions.blockReadsOutsideWorkingDirectories: the reading file
	// tools (Read, Grep, Glob, LSP) are refused outside the working
	// directories, and a Bash command naming a path outside them is
	// asked in every mode.
	BlockReadsOutsideWorkingDirectories *Switch
	// BlockReadsExemptPaths are the clean absolute paths (a directory
	// with everything below it, or a file) that
	// BlockReadsOutsideWorkingDirectories lets through; they allow nothing
	// by themselves. WorkingDirectoriesExclude are paths inside the
	// working directories that the block switches treat as outside them
	// (a working directory that lies in such a path is still one).
	// WorkingDirectoriesAsGiven are working directories to be judged as
	// written, without resolving their links. All three are read from
	// --settings only (elsewhere they are ignored with a warning); an
	// entry that is relative, starts with ~, has a .. segment, has white
	// space around it or is the root directory is ignored with a warning.
	BlockReadsExemptPaths     []string
	WorkingDirectoriesExclude []string
	WorkingDirectoriesAsGiven []string
	// DenyInsteadOfPrompting is non-nil when the user settings, --settings
	// or the managed policy set permissions.denyInsteadOfPrompting to
	// true: a call that would be put to a person (CanUseTool, a prompt) is
	// denied instead. Project and local files may not set it (ignored
	// with a warning).
	DenyInsteadOfPrompting *Switch
	// Extra holds the permissions fields this package does not model,
	// each from the highest-precedence file that sets it.
	Extra map[string]json.RawMessage
}

// DisableValue is the one value permissions.disableBypassPermissionsMode
// and permissions.disableAutoMode accept; any other is an error.
const DisableValue = "disable"

// ModeDisable names the settings file that turned a permission mode off.
type ModeDisable struct {
	Source Source
	// File is the file as a user would name it, as in [Error]:
	// "~/.claude/settings.json", ".claude/settings.json", "--settings"
	// for inline JSON.
	File string
}

// HookMatcher is one entry of a settings file's hooks list for an event:
// the hooks to run when Matcher matches.
type HookMatcher struct {
	Matcher string
	Hooks   []Hook
	Source  Source
	File    string // "" for inline --settings JSON
}

// Hook is one hook of a HookMatcher. The fields of every type are read
// and type-checked here (a command hook needs a command, a prompt hook a
// prompt, an http hook an http or https url); which of them a type honours
// is decided by package hooks, which warns about the rest.
type Hook struct {
	// Type is "command", "prompt", "agent", "http" or "mcp_tool".
	Type string
	// Command is the shell command of a command hook.
	Command string
	// Prompt is the prompt of a prompt (or agent) hook, Model the model
	// it asks ("" for the default).
	Prompt string
	Model  string
	// URL is where an http hook posts; Headers are its request headers,
	// whose values may name environment variables ($VAR, ${VAR}) listed
	// in AllowedEnvVars.
	URL            string
	Headers        map[string]string
	AllowedEnvVars []string
	// Timeout is in seconds; 0 means the event's default.
	Timeout float64
	// The optional fields of the reference's hook entries, as written.
	Args            []string
	If              string
	Shell           string
	OnFailure       string // "", "continue" or "block"
	StatusMessage   string
	Once            bool
	Async           bool
	AsyncRewake     bool
	ContinueOnBlock bool
	// Fields are the entry's keys, in file order (for warnings about
	// fields a type does not know).
	Fields []string
	// Raw is the whole entry as written.
	Raw json.RawMessage
}

// File is a settings file that was read.
type File struct {
	Source Source
	Path   string // "" for inline --settings JSON
}

// Settings are the merged settings of all loaded sources.
//
// Precedence, highest first: managed policy, --settings, local, project,
// user. A scalar (model, permissions.defaultMode, an env variable, an
// unmodelled field) comes from the highest source that sets it; lists
// (permission rules, additional directories, hooks) are the
// concatenation of all sources, lowest precedence first. The switches
// that turn a permission mode off (permissions.disableBypassPermissionsMode,
// permissions.disableAutoMode) hold when any source sets them.
type Settings struct {
	Permissions Permissions
	// Hooks maps an event name ("PreToolUse", …) to its matchers.
	Hooks map[string][]HookMatcher
	// Env are environment variables for the session and its tools.
	Env map[string]string
	// EnvLayers are the env objects of the files, one per file that has
	// one, lowest precedence first: which source set which variable
	// (see [Settings.TrustedEnv], env.go).
	EnvLayers []EnvLayer
	Model     string
	// AutoCompactEnabled is the autoCompactEnabled key: nil when no file
	// sets it (compaction is on), false to turn automatic compaction off.
	AutoCompactEnabled *bool
	// AutoCompactWindow is the autoCompactWindow key: the context window,
	// in tokens, that automatic compaction keeps the conversation within;
	// 0 when no file sets it (the model's window).
	AutoCompactWindow int64
	// DisableAllHooks is true when a file turned hooks off. Hooks then
	// holds only the managed policy's hooks (or none, if the policy
	// itself turned them off).
	DisableAllHooks bool
	// Extra holds the top-level fields this package does not model,
	// each from the highest-precedence file that sets it.
	Extra map[string]json.RawMessage
	// ExtraSource says which source each key of Extra came from.
	ExtraSource map[string]Source
	// Sandbox is the merged "sandbox" object (see [Sandbox]).
	Sandbox Sandbox
	// Managed holds the keys only the managed policy may set (see
	// [Managed]); the zero value when the policy sets none.
	Managed Managed
	// Files are the files that were read, lowest precedence first.
	Files []File
	// Warnings note settings that were read but ignored.
	Warnings []string
}

// Load reads and merges the settings files selected by opts. Missing
// files are skipped, except a --settings file, which must exist. A UTF-8
// byte order mark at the start of a file is ignored.
//
// A user settings file (~/.claude/settings.json) that cannot be read or is
// malformed is left out whole, with a warning in Settings.Warnings naming
// each problem: it applies to every project, and one bad edit there should
// not stop them all. If any other file is malformed (the project and local
// files, --settings, the managed policy), Load returns an error naming
// each bad file and field and no settings at all.
//
// Settings files are trusted configuration: their hooks run commands with
// the process's privileges. Load only reads; it is safe for concurrent
// use.
func Load(opts Options) (*Settings, error) {
	o, err := opts.resolved()
	if err != nil {
		return nil, err
	}
	var layers []*layer
	var errs []error
	var skipped []string // warnings about user files left out
	add := func(s Source, path string, data []byte) {
		l, lerrs := parse(stripBOM(data), s, path, o.display(s, path), o.root(s, path))
		if len(lerrs) > 0 && s == UserSettings {
			skipped = append(skipped, skipWarning(lerrs))
			return
		}
		errs = append(errs, lerrs...)
		if len(lerrs) == 0 {
			layers = append(layers, l)
		}
	}
	readSource := func(s Source) {
		if s == UserSettings && o.ConfigDir == "" {
			return // no home directory: no user settings
		}
		path, err := o.Path(s)
		if err != nil {
			errs = append(errs, err)
			return
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return
		}
		if err != nil {
			rerr := &Error{File: o.display(s, path), Msg: readError(err), Err: err}
			if s == UserSettings {
				skipped = append(skipped, skipWarning([]error{rerr}))
			} else {
				errs = append(errs, rerr)
			}
			return
		}
		add(s, path, data)
	}
	sources := o.Sources
	if sources == nil {
		sources = []SettingSource{User, Project, Local}
	}
	for _, want := range []SettingSource{User, Project, Local} {
		for _, s := range sources {
			if s == want {
				readSource(map[SettingSource]Source{User: UserSettings, Project: ProjectSettings, Local: LocalSettings}[s])
				break
			}
		}
	}
	for _, s := range sources {
		if s != User && s != Project && s != Local {
			errs = append(errs, fmt.Errorf("settings: unknown setting source %q (want user, project or local)", s))
		}
	}
	if o.Flag != "" {
		if isInline(o.Flag) {
			add(FlagSettings, "", []byte(o.Flag))
		} else {
			path, _ := o.Path(FlagSettings)
			data, err := os.ReadFile(path)
			if err != nil {
				errs = append(errs, &Error{File: o.Flag, Msg: readError(err), Err: err})
			} else {
				add(FlagSettings, path, data)
			}
		}
	}
	readSource(PolicySettings)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	st := merge(layers, o)
	st.Warnings = append(skipped, st.Warnings...)
	return st, nil
}

// utf8BOM is the byte order mark some Windows editors put at the start of
// a UTF-8 file.
const utf8BOM = "\xef\xbb\xbf"

// stripBOM drops a UTF-8 byte order mark from the start of a settings
// file, which JSON itself does not allow.
func stripBOM(data []byte) []byte {
	return bytes.TrimPrefix(data, []byte(utf8BOM))
}

// readError describes a failure to read a file whose name the message
// already gives: "no such file or directory" rather than "open
// /etc/x.json: no such file or directory".
func readError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// skipWarning is the warning for a user settings file that Load left out
// because of errs.
func skipWarning(errs []error) string {
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "; ") + " (the user settings file is ignored until it is fixed)"
}

// root is the directory that "/path" rules of a source are relative to.
func (o Options) root(s Source, path string) string {
	switch s {
	case UserSettings:
		return o.ConfigDir
	case FlagSettings, PolicySettings:
		if path != "" {
			return filepath.Dir(path)
		}
	}
	return o.Cwd
}

// merge combines layers given lowest precedence first.
func merge(layers []*layer, o Options) *Settings {
	s := &Settings{Hooks: map[string][]HookMatcher{}, Env: map[string]string{},
		Extra: map[string]json.RawMessage{}, ExtraSource: map[string]Source{}}
	s.Sandbox.AutoAllowBashIfSandboxed, s.Sandbox.AllowUnsandboxedCommands = true, true // the reference's defaults
	s.Permissions.Extra = map[string]json.RawMessage{}
	seenDir := map[string]bool{}
	disable, policyDisable, managedOnly := false, false, false
	for _, l := range layers {
		s.Files = append(s.Files, File{Source: l.source, Path: l.path})
		s.Warnings = append(s.Warnings, l.warnings...)
		rule := func(v string, b Behavior) Rule {
			return Rule{Value: v, Behavior: b, Source: l.source, File: l.path, Root: l.root}
		}
		for _, v := range l.allow {
			s.Permissions.Allow = append(s.Permissions.Allow, rule(v, Allow))
		}
		for _, v := range l.deny {
			s.Permissions.Deny = append(s.Permissions.Deny, rule(v, Deny))
		}
		for _, v := range l.ask {
			s.Permissions.Ask = append(s.Permissions.Ask, rule(v, Ask))
		}
		if l.defaultMode != "" {
			if repoShipped(l.source) && escalating(l.defaultMode) {
				s.Warnings = append(s.Warnings, fmt.Sprintf(
					"%s: permissions.defaultMode %q ignored: a file a repository can ship may not start sessions in a more permissive mode",
					l.display, l.defaultMode))
			} else {
				s.Permissions.DefaultMode = l.defaultMode
				s.Permissions.DefaultModeSource = l.source
			}
		}
		for _, d := range l.addDirs {
			p := o.abs(d)
			if !seenDir[p] {
				seenDir[p] = true
				s.Permissions.AdditionalDirectories = append(s.Permissions.AdditionalDirectories,
					Directory{Path: p, Source: l.source})
			}
		}
		if l.disableBypass { // only ever set: a file cannot re-enable a mode
			s.Permissions.DisableBypassPermissionsMode = &ModeDisable{Source: l.source, File: l.display}
		}
		if l.disableAuto {
			s.Permissions.DisableAutoMode = &ModeDisable{Source: l.source, File: l.display}
		}
		for k, v := range l.permExtra {
			s.Permissions.Extra[k] = v
		}
		mergeBlock(s, l) // permissions_block.go
		for _, ev := range l.hookEvents {
			s.Hooks[ev] = append(s.Hooks[ev], l.hooks[ev]...)
		}
		for k, v := range l.env {
			s.Env[k] = v
		}
		addEnvLayer(s, l) // env.go
		if l.model != nil {
			s.Model = *l.model
		}
		if l.autoCompactEnabled != nil {
			v := *l.autoCompactEnabled
			s.AutoCompactEnabled = &v
		}
		if l.autoCompactWindow != nil {
			s.AutoCompactWindow = *l.autoCompactWindow
		}
		if l.disableAllHooks != nil {
			if l.source == PolicySettings {
				policyDisable = *l.disableAllHooks
			} else {
				disable = *l.disableAllHooks
			}
		}
		if l.source == PolicySettings && l.allowManagedHooksOnly != nil {
			managedOnly = *l.allowManagedHooksOnly
		}
		for k, v := range l.extra {
			s.Extra[k] = v
			s.ExtraSource[k] = l.source
		}
		if l.managed != nil { // only the policy layer has one
			s.Managed = *l.managed
		}
		mergeSandbox(s, l, o)
	}
	finishSandbox(s, layers, o) // sandbox_credentials.go
	s.DisableAllHooks = disable || policyDisable
	s.Managed.HooksOnly = managedOnly // managed.go
	if policyDisable {
		s.Hooks = map[string][]HookMatcher{}
	} else if disable || managedOnly {
		for ev, ms := range s.Hooks {
			var keep []HookMatcher
			for _, m := range ms {
				if m.Source == PolicySettings {
					keep = append(keep, m)
				}
			}
			if keep == nil {
				delete(s.Hooks, ev)
			} else {
				s.Hooks[ev] = keep
			}
		}
	}
	return s
}

// repoShipped reports whether files of the source live inside the project
// and so can arrive with a cloned repository: the project file and the
// local file alike (.claude/settings.local.json is usually ignored by git,
// but nothing stops a repository from committing one).
func repoShipped(src Source) bool { return src == ProjectSettings || src == LocalSettings }

// escalating modes are those a project file is not trusted to start in.
func escalating(mode string) bool {
	switch vocab.PermissionMode(mode) {
	case vocab.PermissionBypass, vocab.PermissionAcceptEdits, vocab.PermissionAuto:
		return true
	}
	return false
}

// Error is a malformed settings file or field.
type Error struct {
	File  string // the file as a user would name it; "--settings" for inline JSON
	Field string // "permissions.allow[2]"; empty when the whole file is bad
	Msg   string
	// Err is the cause, when there is one: a *json.SyntaxError, or an
	// error wrapping ErrUnknownValue for a value outside a vocabulary
	// (permissions.defaultMode). Msg already describes it.
	Err error
}

// ErrUnknownValue is matched (errors.Is) by the errors of values outside
// a closed vocabulary, such as an unknown permissions.defaultMode.
var ErrUnknownValue = vocab.ErrUnknownValue

// Unwrap returns the cause, or nil.
func (e *Error) Unwrap() error { return e.Err }

// Error reads "<file>: <field>: <problem>".
func (e *Error) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Field + ": " + e.Msg
}
