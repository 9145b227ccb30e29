package conversation_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
)

// The security harness runs attack cases through the real loop: the real
// session, checker, tools and bash, with agentlooptest playing a model that
// makes exactly one crafted tool call. Each end-to-end case names the side
// effect the call would have if it ran; the normal tests check that it does
// not happen, and the mutation test (authorisation forced to allow, no
// sandbox) checks that it does, so that every case can fail.
//
// Case files:
//   - internal/permission/testdata/adversarial.json (shared with the checker's
//     table test, whose "doc" describes the layout), and
//   - testdata/security/*.json (end-to-end only; see its "doc").

// securityCase is one attack. The fields past Setup are used only by
// testdata/security.
type securityCase struct {
	Name       string            `json:"name"`
	Class      int               `json:"class,omitempty"`
	Allow      []string          `json:"rules_allow"`
	Deny       []string          `json:"rules_deny"`
	Ask        []string          `json:"rules_ask"`
	Mode       string            `json:"mode"`
	Tool       string            `json:"tool"`
	Input      map[string]any    `json:"input"`
	Want       string            `json:"want"`
	SideEffect string            `json:"side_effect_path"`
	Setup      []json.RawMessage `json:"setup"`

	// SecretMarker is a file the harness fills with a unique marker
	// ($SECRET, which setup steps may also use in paths and contents);
	// the marker must not reach the stream or the model.
	SecretMarker string `json:"secret_marker"`
	// Sink starts a loopback TCP listener ($SINK is its host:port,
	// $SINKPORT its port) that must see no connection.
	Sink bool `json:"sink"`
	// AllowedTools and DisallowedTools are Options.AllowedTools and
	// Options.DisallowedTools (--allowedTools, --disallowedTools).
	AllowedTools    []string `json:"allowed_tools"`
	DisallowedTools []string `json:"disallowed_tools"`
	// Subagent, when set, has the main agent start a subagent (type
	// "worker", with these tools) that makes the call instead.
	Subagent *struct {
		Tools []string `json:"tools"`
	} `json:"subagent"`
	// Requires lists programs the case needs on PATH; without them it is
	// skipped.
	Requires []string `json:"requires"`
	// Defense "bash-env" says that what stops the case lives in the
	// environment the Bash tool gives every command (the git hardening),
	// which the test seam cannot switch off: the mutation test then runs
	// the command with bash directly, in the tool's environment without it.
	Defense string `json:"defense"`

	file string // which file the case came from
	// approveByHook adds a PreToolUse command hook that approves every
	// call (the CLI test's control runs).
	approveByHook bool
	// sandboxOff turns the Bash sandbox (on by default) off in the run's
	// settings, for a control run that must show the side effect.
	sandboxOff bool
}

// e2eTools are the tools the harness can run a call of.
var e2eTools = []string{"Bash", "Write", "Edit", "Read", "Grep", "Glob", "WebFetch", "NotebookEdit"}

// endToEnd reports whether the case has a side effect the harness observes.
func (c *securityCase) endToEnd() bool {
	if !slices.Contains(e2eTools, c.Tool) {
		return false
	}
	return c.SideEffect != "" || c.SecretMarker != "" || c.Sink || c.usesSecret()
}

func (c *securityCase) usesSecret() bool {
	for _, s := range c.Setup {
		if strings.Contains(string(s), "$SECRET") {
			return true
		}
	}
	return c.SecretMarker != ""
}

// usesHome reports whether the case touches the home directory; such cases
// run one at a time with HOME pointing at their own home.
func (c *securityCase) usesHome() bool {
	b, _ := json.Marshal(c)
	return strings.Contains(string(b), "$HOME") || strings.Contains(string(b), "~")
}

// id is how failures name the case.
func (c *securityCase) id() string { return fmt.Sprintf("%q (%s)", c.Name, c.file) }

// loadSecurityCases reads every case file, in a fixed order.
func loadSecurityCases(t *testing.T) []securityCase {
	t.Helper()
	files := []string{"../permission/testdata/adversarial.json"}
	more, err := filepath.Glob("testdata/security/*.json")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(more)
	files = append(files, more...)
	var all []securityCase
	seen := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("reading cases: %v", err)
		}
		var doc struct {
			Cases []securityCase `json:"cases"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range doc.Cases {
			c.file = f
			if prev, dup := seen[c.Name]; dup {
				t.Errorf("case %q is in both %s and %s", c.Name, prev, f)
			}
			seen[c.Name] = f
			all = append(all, c)
		}
	}
	return all
}

// securityEnv is the layout of one run: root/{work,out,home,mark}.
type securityEnv struct {
	root, cwd, out, home string
	mark                 string // $MARK: a file a marker command creates
	secret               string // $SECRET: the marker planted in secret files
	sink                 *sink
	repl                 *strings.Replacer
}

func newSecurityEnv(t *testing.T, c *securityCase) *securityEnv {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := &securityEnv{root: root, cwd: filepath.Join(root, "work"), out: filepath.Join(root, "out"),
		home: filepath.Join(root, "home"), mark: filepath.Join(root, "mark", "ran")}
	for _, d := range []string{e.cwd, e.out, e.home, filepath.Dir(e.mark)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	e.secret = "AGLSECRET" + hex.EncodeToString(b[:])
	pairs := []string{"$CWDUPPER", filepath.Join(root, "WORK"), "$CWD", e.cwd, "$OUT", e.out, "$HOME", e.home,
		"$MARK", e.mark, "$SECRET", e.secret}
	if c.Sink {
		e.sink = startSink(t)
		pairs = append(pairs, "$SINKPORT", strconv.Itoa(e.sink.port), "$SINK", e.sink.addr)
	}
	e.repl = strings.NewReplacer(pairs...)
	return e
}

// path expands the placeholders of p; a relative result is taken from the
// working directory.
func (e *securityEnv) path(p string) string {
	p = e.repl.Replace(p)
	if !filepath.IsAbs(p) {
		p = filepath.Join(e.cwd, p)
	}
	return p
}

// expand replaces the placeholders in every string of v.
func (e *securityEnv) expand(v any) any {
	switch x := v.(type) {
	case string:
		return e.repl.Replace(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, y := range x {
			out[k] = e.expand(y)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = e.expand(y)
		}
		return out
	}
	return v
}

func (e *securityEnv) rules(rs []string) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, e.repl.Replace(r))
	}
	return out
}

// setup runs the case's setup steps: mkdir PATH; file [PATH, CONTENT];
// exec [PATH, CONTENT]; symlink [LINK, TARGET]; sh COMMAND (run by bash in
// the working directory, for layouts such as git repositories).
func (e *securityEnv) setup(t *testing.T, c *securityCase) {
	t.Helper()
	if c.SecretMarker != "" {
		p := e.path(c.SecretMarker)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(e.secret+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, raw := range c.Setup {
		var step map[string]json.RawMessage
		if err := json.Unmarshal(raw, &step); err != nil {
			t.Fatalf("setup step %s: %v", raw, err)
		}
		for kind, arg := range step {
			var one string
			var two []string
			_ = json.Unmarshal(arg, &one)
			_ = json.Unmarshal(arg, &two)
			if (kind == "mkdir" || kind == "sh") && one == "" || kind != "mkdir" && kind != "sh" && len(two) != 2 {
				t.Fatalf("setup step %s: bad argument", raw)
			}
			var err error
			switch kind {
			case "mkdir":
				err = os.MkdirAll(e.path(one), 0o755)
			case "file", "exec":
				mode := os.FileMode(0o644)
				if kind == "exec" {
					mode = 0o755
				}
				p := e.path(two[0])
				if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
					err = os.WriteFile(p, []byte(e.repl.Replace(two[1])), mode)
				}
			case "symlink":
				p := e.path(two[0])
				if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
					err = os.Symlink(e.repl.Replace(two[1]), p)
				}
			case "sh":
				cmd := exec.Command("bash", "-c", e.repl.Replace(one))
				cmd.Dir = e.cwd
				cmd.Env = append(os.Environ(), "HOME="+e.home, "GIT_CONFIG_NOSYSTEM=1")
				var out []byte
				if out, err = cmd.CombinedOutput(); err != nil {
					err = fmt.Errorf("%w: %s", err, out)
				}
			default:
				err = fmt.Errorf("unknown setup step")
			}
			if err != nil {
				t.Fatalf("setup %s %s: %v", kind, arg, err)
			}
		}
	}
}

// fileState is what the side-effect check compares: whether a path exists,
// and what it holds or points to.
type fileState struct {
	exists  bool
	content string
}

func stateOf(p string) fileState {
	fi, err := os.Lstat(p)
	if err != nil {
		return fileState{}
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		return fileState{exists: true, content: "link:" + target}
	case fi.IsDir():
		names, _ := os.ReadDir(p)
		var s []string
		for _, n := range names {
			s = append(s, n.Name())
		}
		return fileState{exists: true, content: "dir:" + strings.Join(s, ",")}
	}
	b, _ := os.ReadFile(p)
	return fileState{exists: true, content: string(b)}
}

// sink is a loopback TCP listener that counts connections and answers
// each with a small HTTP page.
type sink struct {
	ln    net.Listener
	addr  string
	port  int
	hits  atomic.Int32
	wg    sync.WaitGroup
	first atomic.Value // string: what the first connection sent
	once  sync.Once
}

func startSink(t *testing.T) *sink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{ln: ln, addr: ln.Addr().String(), port: ln.Addr().(*net.TCPAddr).Port}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.hits.Add(1)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(2 * time.Second))
				buf := make([]byte, 512)
				n, _ := c.Read(buf)
				s.first.CompareAndSwap(nil, strconv.Quote(string(buf[:n])))
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nConnection: close\r\n\r\nsink reached"))
			}()
		}
	}()
	t.Cleanup(func() { s.stop() })
	return s
}

// stop accepts what is still queued, then closes the listener.
func (s *sink) stop() {
	s.once.Do(func() {
		if tl, ok := s.ln.(*net.TCPListener); ok {
			_ = tl.SetDeadline(time.Now().Add(30 * time.Millisecond))
		}
		time.Sleep(40 * time.Millisecond)
		_ = s.ln.Close()
		s.wg.Wait()
	})
}

// outcome is what one run of a case did.
type outcome struct {
	effects []string // side effects observed, described
	result  string   // the tool result the call got ("" if it never ran)
	isError bool
	ran     bool // the call reached the tool stage (a tool result exists)
	runErr  error
}

const (
	caseCallID  = "toolu_case"
	agentCallID = "toolu_agent"
	workerText  = "You are the worker subagent of the security tests."
)

// securityTools are the tools every run offers (minus DisallowedTools).
var securityTools = []string{"Bash", "Write", "Edit", "Read", "Grep", "Glob", "WebFetch", "NotebookEdit", "Agent"}

// toolResultIn finds the tool_result block for id in any message of r.
func toolResultIn(r *agentlooptest.Request, id string) (model.Content, bool) {
	for _, m := range r.Params.Messages {
		for _, c := range m.Content {
			if c.Type == model.TypeToolResult && c.ToolUseID == id {
				return c, true
			}
		}
	}
	return model.Content{}, false
}

// scriptedModel answers every request of one run: the main agent makes the
// case's call (or starts the worker subagent, which makes it), then ends;
// requests without tools (the auto-mode classifier, WebFetch's summary) get
// an answer nobody can act on.
func scriptedModel(c *securityCase, input map[string]any) func(*agentlooptest.Request) (agentlooptest.Reply, bool) {
	return func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		if len(r.Params.Tools) == 0 {
			return agentlooptest.Text("not sure"), true
		}
		if _, done := toolResultIn(r, caseCallID); done {
			reply := agentlooptest.Text("done")
			if bg, _ := input["run_in_background"].(bool); bg {
				// Give a background command time to act before the
				// session ends and stops it.
				reply.Delay = 500 * time.Millisecond
			}
			return reply, true
		}
		if c.Subagent != nil && !strings.Contains(r.SystemText(), workerText) {
			if _, done := toolResultIn(r, agentCallID); done {
				return agentlooptest.Text("done"), true
			}
			return agentlooptest.ToolUse(agentCallID, "Agent", map[string]any{"description": "Run the step",
				"prompt": "Run the step.", "subagent_type": "worker"}), true
		}
		return agentlooptest.ToolUse(caseCallID, c.Tool, input), true
	}
}

// securityRun is one prepared run of a case: its layout set up, the
// watched path's state taken, and a scripted model ready.
type securityRun struct {
	c       *securityCase
	e       *securityEnv
	watched string
	before  fileState
	input   map[string]any
	perms   string // the rules as settings JSON
	srv     *agentlooptest.Server
}

// prepareSecurityRun sets up the case's layout and model. Cases that use
// the home directory get HOME set to their own (so they must not run in
// parallel).
func prepareSecurityRun(t *testing.T, c *securityCase) *securityRun {
	t.Helper()
	for _, prog := range c.Requires {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("needs %s on PATH", prog)
		}
	}
	r := &securityRun{c: c, e: newSecurityEnv(t, c)}
	if c.usesHome() {
		t.Setenv("HOME", r.e.home)
	}
	r.e.setup(t, c)
	if c.SideEffect != "" {
		r.watched = r.e.path(c.SideEffect)
		r.before = stateOf(r.watched)
	}
	r.input, _ = r.e.expand(c.Input).(map[string]any)
	if r.input == nil {
		r.input = map[string]any{}
	}
	if strings.Contains(fmt.Sprint(r.input), r.e.secret) {
		t.Fatalf("case %s: the input names the secret marker", c.id())
	}
	doc := map[string]any{"permissions": map[string]any{
		"allow": r.e.rules(c.Allow), "deny": r.e.rules(c.Deny), "ask": r.e.rules(c.Ask)}}
	if c.approveByHook {
		approve := `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`
		doc["hooks"] = map[string]any{"PreToolUse": []any{map[string]any{"matcher": "*",
			"hooks": []any{map[string]any{"type": "command", "command": approve}}}}}
	}
	if c.sandboxOff {
		doc["sandbox"] = map[string]any{"enabled": false}
	}
	perms, _ := json.Marshal(doc)
	r.perms = string(perms)
	r.srv = agentlooptest.NewTB(t)
	r.srv.SetRouter(scriptedModel(c, r.input))
	return r
}

// agents is the subagent definition of the case, if it has one.
func (r *securityRun) agents() map[string]agentloop.AgentDefinition {
	if r.c.Subagent == nil {
		return nil
	}
	return map[string]agentloop.AgentDefinition{"worker": {Description: "Runs one step.",
		Prompt: workerText, Tools: r.c.Subagent.Tools}}
}

// runSecurityCase runs c once through agentloop.Query and reports what
// happened.
func runSecurityCase(t *testing.T, c *securityCase) outcome {
	t.Helper()
	r := prepareSecurityRun(t, c)
	opts := &agentloop.Options{
		Provider: provider(t, r.srv, nil), Cwd: r.e.cwd, Tools: securityTools,
		PermissionMode: agentloop.PermissionMode(c.Mode), Settings: r.perms,
		SettingSources:  []settings.SettingSource{},
		AllowedTools:    r.e.rules(c.AllowedTools),
		DisallowedTools: c.DisallowedTools,
		Agents:          r.agents(),
	}
	if c.usesHome() {
		opts.Env = map[string]string{"HOME": r.e.home}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	msgs, runErr := agentloop.Query(ctx, "go", opts).Collect()
	if ctx.Err() != nil {
		runErr = fmt.Errorf("the run timed out: %w", ctx.Err())
	}
	var stream strings.Builder
	for _, m := range msgs {
		b, _ := json.Marshal(m)
		stream.Write(b)
		stream.WriteByte('\n')
	}
	return r.observe(stream.String(), runErr)
}

// observe collects what the run did: the call's tool result and every
// side effect seen (stream is everything the run printed).
func (r *securityRun) observe(stream string, runErr error) outcome {
	o := outcome{runErr: runErr}
	for _, req := range r.srv.Requests() {
		if tr, ok := toolResultIn(req, caseCallID); ok {
			o.ran, o.result, o.isError = true, tr.ResultText(), tr.IsError != nil && *tr.IsError
		} else if tr, ok := toolResultIn(req, agentCallID); ok && !o.ran {
			o.result = "(the Agent call got: " + tr.ResultText() + ")"
		}
	}
	if r.watched != "" {
		if after := stateOf(r.watched); after != r.before {
			o.effects = append(o.effects, fmt.Sprintf("%s changed (existed %v, now %v)", r.c.SideEffect, r.before.exists, after.exists))
		}
	}
	if r.c.usesSecret() {
		if strings.Contains(stream, r.e.secret) {
			o.effects = append(o.effects, "the secret reached the stream")
		}
		for _, req := range r.srv.AllRequests() {
			if strings.Contains(string(req.Body), r.e.secret) {
				o.effects = append(o.effects, "the secret reached the model")
				break
			}
		}
	}
	if s := r.e.sink; s != nil {
		s.stop()
		if n := s.hits.Load(); n > 0 {
			first, _ := s.first.Load().(string)
			o.effects = append(o.effects, fmt.Sprintf("the sink saw %d connection(s), the first sending %.80s", n, first))
		}
	}
	return o
}

// forEachCase runs check on every end-to-end case, in parallel except for
// the cases that use the home directory (they set HOME), which run first,
// one at a time.
func forEachCase(t *testing.T, check func(t *testing.T, c *securityCase)) int {
	cases := loadSecurityCases(t)
	n := 0
	for _, home := range []bool{true, false} {
		for i := range cases {
			c := &cases[i]
			if !c.endToEnd() || c.usesHome() != home {
				continue
			}
			n++
			t.Run(c.Name, func(t *testing.T) {
				if !home {
					t.Parallel()
				}
				check(t, c)
			})
		}
	}
	return n
}

// runDirect runs a Bash case's command with bash itself, in the
// environment the Bash tool would give it minus its hardening, and reports
// what it did: the mutation test's way to show that a case stopped by that
// hardening is a real attack.
func runDirect(t *testing.T, c *securityCase) outcome {
	t.Helper()
	r := prepareSecurityRun(t, c)
	command, _ := r.input["command"].(string)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", command)
	cmd.Dir = r.e.cwd
	cmd.Env = append(os.Environ(), "HOME="+r.e.home, "PWD="+r.e.cwd, "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	o := r.observe(string(out), nil)
	o.ran, o.result, o.isError = true, string(out), err != nil
	return o
}
