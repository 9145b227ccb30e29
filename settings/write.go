package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentloop/agentloop/internal/vocab"
)

// UpdateType is the kind of a PermissionUpdate.
type UpdateType string

// The update kinds.
const (
	AddRules          UpdateType = "addRules"
	ReplaceRules      UpdateType = "replaceRules"
	RemoveRules       UpdateType = "removeRules"
	SetMode           UpdateType = "setMode"
	AddDirectories    UpdateType = "addDirectories"
	RemoveDirectories UpdateType = "removeDirectories"
)

// RuleValue is a rule as a permission update names it: a tool and an
// optional specifier.
type RuleValue struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// String is the rule as written in a settings file: "Bash" or
// "Bash(npm test:*)".
func (r RuleValue) String() string {
	if r.RuleContent == "" {
		return r.ToolName
	}
	return r.ToolName + "(" + r.RuleContent + ")"
}

// ParseRule splits a rule as written in a settings file into tool name and
// specifier. "Bash", "Bash()" and "Bash(*)" all have an empty specifier.
func ParseRule(s string) RuleValue {
	s = strings.TrimSpace(s)
	name, rest, ok := strings.Cut(s, "(")
	if !ok || !strings.HasSuffix(rest, ")") {
		return RuleValue{ToolName: s}
	}
	content := strings.TrimSuffix(rest, ")")
	if content == "*" {
		content = ""
	}
	return RuleValue{ToolName: strings.TrimSpace(name), RuleContent: content}
}

// PermissionUpdate is a change to the permission settings, in the shape of
// the SDK's PermissionUpdate (suggestions on a permission prompt, and
// updatedPermissions in an answer). Its JSON form is the wire form.
type PermissionUpdate struct {
	Type UpdateType `json:"type"`
	// Rules and Behavior are for addRules, replaceRules and removeRules.
	Rules    []RuleValue `json:"rules,omitempty"`
	Behavior Behavior    `json:"behavior,omitempty"`
	// Mode is for setMode.
	Mode string `json:"mode,omitempty"`
	// Directories are for addDirectories and removeDirectories.
	Directories []string `json:"directories,omitempty"`
	// Destination is userSettings, projectSettings, localSettings (a
	// file), or session or cliArg (memory only).
	Destination Source `json:"destination"`
}

// Persistent reports whether updates to d are written to a file.
func (d Source) Persistent() bool {
	return d == UserSettings || d == ProjectSettings || d == LocalSettings
}

// writeMu serialises Apply within the process.
var writeMu sync.Mutex

// Apply writes updates to the settings files they are destined for. Each
// file is read, changed, and replaced atomically (a temporary file in the
// same directory, then a rename), keeping its other fields and their
// order; a file or .claude directory that does not exist is created.
// Updates for session or cliArg are not persisted and are skipped, as is
// setMode to bypassPermissions, which is never persisted.
//
// Apply checks every update and reads every destination file before
// writing any: a malformed update or destination file leaves all files as
// they were. Calls are serialised within the process; concurrent writers in
// other processes are not locked out (the last rename wins).
func Apply(opts Options, updates ...PermissionUpdate) error {
	writeMu.Lock()
	defer writeMu.Unlock()
	o, err := opts.resolved()
	if err != nil {
		return err
	}
	type pending struct {
		path string
		top  *object
		mode fs.FileMode
	}
	var order []Source
	files := map[Source]*pending{}
	for i, u := range updates {
		if err := u.check(); err != nil {
			return fmt.Errorf("settings: update %d: %w", i, err)
		}
		if !u.Destination.Persistent() || (u.Type == SetMode && u.Mode == string(vocab.PermissionBypass)) {
			continue
		}
		p := files[u.Destination]
		if p == nil {
			path, err := o.Path(u.Destination)
			if err != nil {
				return err
			}
			top, mode, err := readForWrite(path, o.display(u.Destination, path), u.Destination)
			if err != nil {
				return err
			}
			p = &pending{path: path, top: top, mode: mode}
			files[u.Destination] = p
			order = append(order, u.Destination)
		}
		if err := u.apply(p.top); err != nil {
			return fmt.Errorf("settings: %s: %w", o.display(u.Destination, p.path), err)
		}
	}
	for _, d := range order {
		p := files[d]
		if err := writeAtomic(p.path, p.top, p.mode); err != nil {
			return err
		}
	}
	return nil
}

func (u PermissionUpdate) check() error {
	switch u.Type {
	case AddRules, ReplaceRules, RemoveRules:
		if _, err := vocab.ParseBehavior(string(u.Behavior)); err != nil {
			return fmt.Errorf("%s: %w", u.Type, err)
		}
		for _, r := range u.Rules {
			if msg := checkRule(r.String()); msg != "" || strings.TrimSpace(r.ToolName) == "" {
				if msg == "" {
					msg = "no tool name"
				}
				return fmt.Errorf("%s: %s", u.Type, msg)
			}
		}
	case SetMode:
		if _, err := vocab.ParsePermissionMode(u.Mode); err != nil {
			return fmt.Errorf("setMode: %w", err)
		}
	case AddDirectories, RemoveDirectories:
	default:
		return fmt.Errorf("unknown update type %q", u.Type)
	}
	switch u.Destination {
	case UserSettings, ProjectSettings, LocalSettings, Session, CLIArg:
		return nil
	}
	return fmt.Errorf("%s: unknown destination %q", u.Type, u.Destination)
}

// readForWrite reads a destination file, which must be well-formed.
func readForWrite(path, display string, src Source) (*object, fs.FileMode, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newObject(), 0o644, nil
	}
	if err != nil {
		return nil, 0, err
	}
	data = stripBOM(data)
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if _, errs := parse(data, src, path, display, filepath.Dir(path)); len(errs) > 0 {
		return nil, 0, errors.Join(errs...)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return newObject(), mode, nil
	}
	top, err := parseObject(data)
	if err != nil {
		return nil, 0, syntaxError(display, data, err)
	}
	return top, mode, nil
}

// apply changes the permissions object of top.
func (u PermissionUpdate) apply(top *object) error {
	perms := newObject()
	if raw, ok := top.get("permissions"); ok && !isNull(raw) {
		p, err := parseObject(raw)
		if err != nil {
			return err
		}
		perms = p
	}
	list := func(key string) []string {
		var out []string
		if raw, ok := perms.get(key); ok && !isNull(raw) {
			_ = json.Unmarshal(raw, &out)
		}
		return out
	}
	setList := func(key string, v []string) {
		if v == nil {
			v = []string{}
		}
		b, _ := json.Marshal(v)
		perms.set(key, b)
	}
	switch u.Type {
	case AddRules, ReplaceRules, RemoveRules:
		key := string(u.Behavior)
		var cur []string
		if u.Type != ReplaceRules {
			cur = list(key)
		}
		for _, r := range u.Rules {
			s := r.String()
			if u.Type == RemoveRules {
				cur = slices.DeleteFunc(cur, func(x string) bool { return x == s })
			} else if !slices.Contains(cur, s) {
				cur = append(cur, s)
			}
		}
		setList(key, cur)
	case SetMode:
		b, _ := json.Marshal(u.Mode)
		perms.set("defaultMode", b)
	case AddDirectories, RemoveDirectories:
		cur := list("additionalDirectories")
		for _, d := range u.Directories {
			if u.Type == RemoveDirectories {
				cur = slices.DeleteFunc(cur, func(x string) bool { return x == d })
			} else if !slices.Contains(cur, d) {
				cur = append(cur, d)
			}
		}
		setList("additionalDirectories", cur)
	}
	b, err := perms.marshal()
	if err != nil {
		return err
	}
	top.set("permissions", b)
	return nil
}

// writeAtomic replaces path with top, indented, through a temporary file
// in the same directory.
func writeAtomic(path string, top *object, mode fs.FileMode) error {
	compact, err := top.marshal()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return fmt.Errorf("settings: %s: %w", path, err)
	}
	buf.WriteByte('\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	name := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = os.Remove(name)
		}
	}()
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if err := os.Rename(name, path); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	ok = true
	return nil
}
