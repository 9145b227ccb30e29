package projectfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name, in, front, body string
		err                   bool
	}{
		{"no frontmatter", "hello\n---\nx", "", "hello\n---\nx", false},
		{"plain", "---\na: 1\n---\nbody\n", "a: 1\n", "body\n", false},
		{"crlf and spaces", "---  \r\na: 1\r\n---\r\nbody", "a: 1\r\n", "body", false},
		{"bom", "\ufeff---\na: 1\n---\nb", "a: 1\n", "b", false},
		{"empty front", "---\n---\nb", "", "b", false},
		{"no body", "---\na: 1\n---", "a: 1\n", "", false},
		{"unclosed", "---\na: 1\nbody", "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front, body, err := Split([]byte(tt.in))
			if (err != nil) != tt.err {
				t.Fatalf("err = %v, want error %v", err, tt.err)
			}
			if string(front) != tt.front || body != tt.body {
				t.Errorf("Split = %q, %q; want %q, %q", front, body, tt.front, tt.body)
			}
		})
	}
}

// FuzzSplit checks that Split never panics, that without an error the
// frontmatter and body are pieces of the input in order, and that a file
// not starting with a fence is all body.
func FuzzSplit(f *testing.F) {
	for _, s := range []string{"", "---", "---\n---", "---\na: b\n---\nbody", "x\n---\n", "---\r\n---\r\n", "\ufeff---\n--- \nz"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		front, body, err := Split(data)
		if err != nil {
			return
		}
		in := strings.TrimPrefix(string(data), "\ufeff")
		if front == nil {
			if body != in {
				t.Fatalf("no frontmatter but body %q != input %q", body, in)
			}
			return
		}
		fi := strings.Index(in, string(front))
		if fi < 0 || !strings.HasSuffix(in, body) || fi+len(front) > len(in)-len(body) {
			t.Fatalf("front %q / body %q are not ordered pieces of %q", front, body, in)
		}
		_, _, _ = parse(data, &agentFront{})
	})
}

func TestExpand(t *testing.T) {
	tests := []struct{ body, args, want string }{
		{"Review $ARGUMENTS now", "foo bar", "Review foo bar now"},
		// Recorded from the reference (testdata/conformance/t_slash_args):
		// positions count from zero, one past the end stays as written.
		{"first=$0 second=$1 third=$2", `foo "bar baz"`, "first=foo second=bar baz third=$2"},
		{"Shout the word $1 exactly $2 times. All arguments: $ARGUMENTS\n", "banana 3", "Shout the word 3 exactly $2 times. All arguments: banana 3\n"},
		{"A=$ARGUMENTS[0] B=$ARGUMENTS[1] C=$ARGUMENTS[2] D=$10", `one "two words"`, "A=one B=two words C=$ARGUMENTS[2] D=$10"},
		{"no placeholders\n", "x y", "no placeholders\n\n\nARGUMENTS: x y"},
		{"cost $ 5", "", "cost $ 5"},
		{"no placeholders", "", "no placeholders"},
		{"cost $5 and $0 and $", "a b c d e", "cost $5 and a and $"},
	}
	for _, tt := range tests {
		if got := Expand(tt.body, tt.args); got != tt.want {
			t.Errorf("Expand(%q, %q) = %q, want %q", tt.body, tt.args, got, tt.want)
		}
	}
}

func TestParseInvocation(t *testing.T) {
	tests := []struct {
		in, name, args string
		ok             bool
	}{
		{"/review foo bar", "review", "foo bar", true},
		{"/review", "review", "", true},
		{"/frontend:lint  x\ny", "frontend:lint", "x\ny", true},
		{"/usr/bin/ls", "", "", false},
		{"/ x", "", "", false},
		{"hello /review", "", "", false},
	}
	for _, tt := range tests {
		name, args, ok := ParseInvocation(tt.in)
		if name != tt.name || args != tt.args || ok != tt.ok {
			t.Errorf("ParseInvocation(%q) = %q, %q, %v", tt.in, name, args, ok)
		}
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	proj, user := filepath.Join(t.TempDir(), ".claude"), filepath.Join(t.TempDir(), ".claude")
	write(t, filepath.Join(proj, "skills/pdf/SKILL.md"), "---\nname: pdf\ndescription: Work with PDFs\nallowed-tools: Read, Bash(pdftotext:*)\n---\n# PDF\nUse it.\n")
	write(t, filepath.Join(proj, "skills/pdf/scripts/x.py"), "print(1)")
	write(t, filepath.Join(proj, "skills/broken/SKILL.md"), "---\nname: [unclosed\n---\nbody")
	write(t, filepath.Join(proj, "skills/nofile/other.md"), "x")
	write(t, filepath.Join(user, "skills/pdf/SKILL.md"), "---\ndescription: user pdf\n---\nuser")
	write(t, filepath.Join(user, "skills/notes/SKILL.md"), "# Take notes\nbody")
	write(t, filepath.Join(proj, "commands/review.md"), "---\ndescription: Review code\nargument-hint: <files>\nfoo: 1\n---\nReview $ARGUMENTS")
	write(t, filepath.Join(proj, "commands/fe/lint.md"), "Lint it")
	write(t, filepath.Join(proj, "agents/x.md"), "---\nname: x\ndescription: X agent\ntools: [Read, Grep]\nmodel: haiku\nmaxTurns: 3\neffort: 2\nmcpServers: [s1]\n---\nYou are X.")
	write(t, filepath.Join(proj, "agents/nodesc.md"), "---\nname: y\n---\nbody")
	r := Load([]Dir{{Path: proj, Source: "project"}, {Path: user, Source: "user"}}, Options{})

	type sk struct {
		Name, Desc, Source, Body string
		Tools, Files             []string
	}
	var got []sk
	for _, s := range r.Skills {
		got = append(got, sk{s.Name, s.Description, s.Source, s.Body, s.AllowedTools, s.Files})
	}
	want := []sk{
		{"notes", "Take notes", "user", "# Take notes\nbody", nil, nil},
		{"pdf", "Work with PDFs", "project", "# PDF\nUse it.", []string{"Read", "Bash(pdftotext:*)"}, []string{"scripts/x.py"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("skills (-want +got):\n%s", d)
	}
	var cmds []string
	for _, c := range r.Commands {
		cmds = append(cmds, c.Name+"|"+c.Description+"|"+c.ArgumentHint)
	}
	if d := cmp.Diff([]string{"fe:lint|Lint it|", "review|Review code|<files>"}, cmds); d != "" {
		t.Errorf("commands (-want +got):\n%s", d)
	}
	if len(r.Agents) != 1 {
		t.Fatalf("agents = %+v, want only x", r.Agents)
	}
	a := r.Agents[0]
	if d := cmp.Diff(Agent{Name: "x", Description: "X agent", Tools: []string{"Read", "Grep"}, Model: "haiku", MaxTurns: 3,
		Effort: "2", MCPServers: []any{"s1"}, Prompt: "You are X.", Path: filepath.Join(proj, "agents/x.md"), Source: "project"}, a); d != "" {
		t.Errorf("agent (-want +got):\n%s", d)
	}
	all := strings.Join(r.Problems, "\n")
	for _, want := range []string{"skills/broken/SKILL.md is ignored: malformed frontmatter", "skill directory " + filepath.Join(proj, "skills/nofile") + " is ignored",
		`skill "pdf" in ` + filepath.Join(user, "skills/pdf/SKILL.md") + " is ignored", "frontmatter keys foo are not honoured",
		"nodesc.md is ignored: its frontmatter has no description"} {
		if !strings.Contains(all, want) {
			t.Errorf("problems lack %q:\n%s", want, all)
		}
	}
}

// TestLoadNamespaced: a namespaced directory (a plugin's) prefixes every
// name with "<namespace>:", and its extra paths (a directory, a single
// command or agent file, one skill's directory) add to the default
// subdirectories; a missing extra path is a problem.
func TestLoadNamespaced(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "commands/hello.md"), "Say hello")
	write(t, filepath.Join(root, "commands/git/push.md"), "Push it")
	write(t, filepath.Join(root, "more/special.md"), "Special")
	write(t, filepath.Join(root, "agents/helper.md"), "---\ndescription: Helps\n---\nYou help.")
	write(t, filepath.Join(root, "extra-agents/checker.md"), "---\nname: checker\ndescription: Checks\n---\nYou check.")
	write(t, filepath.Join(root, "skills/review/SKILL.md"), "---\ndescription: Reviews\n---\nReview.")
	write(t, filepath.Join(root, "one-skill/SKILL.md"), "---\nname: solo\ndescription: Alone\n---\nSolo.")
	r := Load([]Dir{{Path: root, Source: "plugin", Namespace: "kit",
		ExtraCommands: []string{filepath.Join(root, "more/special.md"), filepath.Join(root, "missing")},
		ExtraAgents:   []string{filepath.Join(root, "extra-agents")},
		ExtraSkills:   []string{filepath.Join(root, "one-skill")}}}, Options{})
	var got []string
	for _, c := range r.Commands {
		got = append(got, "command "+c.Name+" "+c.Source)
	}
	for _, a := range r.Agents {
		got = append(got, "agent "+a.Name+" "+a.Source)
	}
	for _, s := range r.Skills {
		got = append(got, "skill "+s.Name+" "+s.Source)
	}
	want := []string{"command kit:git:push plugin", "command kit:hello plugin", "command kit:special plugin",
		"agent kit:checker plugin", "agent kit:helper plugin", "skill kit:review plugin", "skill kit:solo plugin"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("loaded (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"command path " + filepath.Join(root, "missing") + " is ignored"}, r.Problems,
		cmp.Comparer(func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) })); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
}
