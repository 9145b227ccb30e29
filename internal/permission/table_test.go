package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tableCase is one entry of testdata/adversarial.json or allowed.json.
type tableCase struct {
	Name           string            `json:"name"`
	RulesAllow     []string          `json:"rules_allow"`
	RulesDeny      []string          `json:"rules_deny"`
	RulesAsk       []string          `json:"rules_ask"`
	Mode           string            `json:"mode"`
	Tool           string            `json:"tool"`
	Input          json.RawMessage   `json:"input"`
	Want           string            `json:"want"`
	SideEffectPath string            `json:"side_effect_path"`
	Setup          []json.RawMessage `json:"setup"`
}

func loadTable(t *testing.T, name string) []tableCase {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []tableCase `json:"cases"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	return f.Cases
}

// tableEnv is the layout the tables describe: root/{work,out,home}.
type tableEnv struct {
	root, cwd, out, home string
	repl                 *strings.Replacer
}

func newTableEnv(t *testing.T) *tableEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &tableEnv{root: root, cwd: filepath.Join(root, "work"), out: filepath.Join(root, "out"), home: filepath.Join(root, "home")}
	for _, d := range []string{e.cwd, e.out, e.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	upper := filepath.Join(root, "WORK")
	e.repl = strings.NewReplacer("$CWDUPPER", upper, "$CWD", e.cwd, "$OUT", e.out, "$HOME", e.home)
	return e
}

func (e *tableEnv) path(p string) string {
	p = e.repl.Replace(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.cwd, p)
	}
	return p
}

func (e *tableEnv) setup(t *testing.T, steps []json.RawMessage) {
	t.Helper()
	for _, raw := range steps {
		var s map[string]json.RawMessage
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		for op, arg := range s {
			var one string
			var two []string
			_ = json.Unmarshal(arg, &one)
			_ = json.Unmarshal(arg, &two)
			var err error
			switch op {
			case "mkdir":
				err = os.MkdirAll(e.path(one), 0o755)
			case "file", "exec":
				p := e.path(two[0])
				mode := os.FileMode(0o644)
				if op == "exec" {
					mode = 0o755
				}
				if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
					err = os.WriteFile(p, []byte(two[1]), mode)
				}
			case "symlink":
				err = os.Symlink(e.repl.Replace(two[1]), e.path(two[0]))
			default:
				t.Fatalf("unknown setup step %q", op)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// checker builds the checker a case describes.
func (e *tableEnv) checker(t *testing.T, c tableCase) *Checker {
	t.Helper()
	var rs RuleSet
	for _, l := range []struct {
		b     Behavior
		rules []string
	}{{Allow, c.RulesAllow}, {Deny, c.RulesDeny}, {Ask, c.RulesAsk}} {
		for _, r := range l.rules {
			v, err := ParseRule(e.repl.Replace(r))
			if err != nil {
				t.Fatal(err)
			}
			if err := rs.Add(SourceCLI, l.b, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	ck, err := New(Config{Mode: Mode(c.Mode), Rules: rs, Dirs: []string{e.cwd}, Home: e.home, AllowBypass: true})
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

// input substitutes the placeholders in every string of the input.
func (e *tableEnv) input(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return e.repl.Replace(x)
		case map[string]any:
			for k, y := range x {
				x[k] = walk(y)
			}
		case []any:
			for i, y := range x {
				x[i] = walk(y)
			}
		}
		return v
	}
	out, err := json.Marshal(walk(v))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runTable(t *testing.T, file string, min int) {
	cases := loadTable(t, file)
	if len(cases) < min {
		t.Fatalf("%s has %d cases, want at least %d", file, len(cases), min)
	}
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.Name] {
			t.Fatalf("duplicate case name %q", c.Name)
		}
		names[c.Name] = true
		t.Run(c.Name, func(t *testing.T) {
			e := newTableEnv(t)
			e.setup(t, c.Setup)
			d := e.checker(t, c).Decide(context.Background(), Call{Tool: c.Tool, Input: e.input(t, c.Input)})
			if string(d.Behavior) != c.Want {
				t.Errorf("got %s (%s: %s), want %s", d.Behavior, d.ReasonType, d.Message, c.Want)
			}
			if d.Behavior != Allow && d.Message == "" {
				t.Errorf("%s without a message", d.Behavior)
			}
		})
	}
}

// TestAdversarial: no call of the table may be allowed.
func TestAdversarial(t *testing.T) { runTable(t, "adversarial.json", 100) }

// TestAllowed: the checker is not uselessly strict.
func TestAllowed(t *testing.T) { runTable(t, "allowed.json", 30) }
