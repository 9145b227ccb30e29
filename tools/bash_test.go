//go:build unix

package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/tool"
)

// bashTestEnv returns a session with its own working directory and ID, whose
// background shells are closed when the test ends.
func bashTestEnv(t testing.TB) *tool.Env {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	env := &tool.Env{Cwd: t.TempDir(), SessionID: "bashtest-" + hex.EncodeToString(b), State: &tool.State{}}
	t.Cleanup(func() {
		if err := BackgroundShells(env).Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return env
}

// bashCall runs tl as the loop does: input validated against the schema
// first, then Run.
func bashCall(t testing.TB, ctx context.Context, tl tool.Tool, env *tool.Env, input any) tool.Result {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	s, err := tool.CompileSchema(tl.Info().InputSchema)
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	in, err := s.Validate(tl.Info().Name, raw)
	if err != nil {
		t.Fatalf("input %s rejected: %v", raw, err)
	}
	r, err := tl.Run(ctx, &tool.Call{ID: "toolu_test", Input: in, Env: env})
	if err != nil {
		t.Fatalf("Run(%s) error: %v", raw, err)
	}
	return r
}

// bashGot is what a test compares of a result.
type bashGot struct {
	Text       string
	IsError    bool
	Structured any
}

func bashSummary(r tool.Result) bashGot {
	return bashGot{Text: r.Text(), IsError: r.IsError, Structured: r.Structured}
}

func TestBashResults(t *testing.T) {
	env := bashTestEnv(t)
	tests := []struct {
		name    string
		command string
		want    bashGot
	}{
		{"echo", "echo hello-oracle", bashGot{
			Text: "hello-oracle", Structured: BashResult{Stdout: "hello-oracle"}}},
		{"multi-line", `printf 'one\ntwo\n\nthree\n\n\n'`, bashGot{
			Text: "one\ntwo\n\nthree", Structured: BashResult{Stdout: "one\ntwo\n\nthree"}}},
		{"leading blank lines dropped, indentation kept", `printf '\n  \n   indented\n'`, bashGot{
			Text: "   indented", Structured: BashResult{Stdout: "   indented"}}},
		{"stderr only", "echo oops >&2", bashGot{
			Text: "oops", Structured: BashResult{Stderr: "oops"}}},
		{"stdout then stderr", "echo err >&2; echo out", bashGot{
			Text: "out\nerr", Structured: BashResult{Stdout: "out", Stderr: "err"}}},
		{"exit code with stdout and stderr", "echo out; echo err >&2; exit 3", bashGot{
			Text: "Exit code 3\nout\nerr", IsError: true, Structured: "Error: Exit code 3\nout\nerr"}},
		{"exit code with stderr only", "echo 'no such thing' >&2; exit 2", bashGot{
			Text: "Exit code 2\nno such thing", IsError: true, Structured: "Error: Exit code 2\nno such thing"}},
		{"exit code without output", "exit 3", bashGot{
			Text: "Exit code 3", IsError: true, Structured: "Error: Exit code 3"}},
		{"killed by a signal", "kill -KILL $$", bashGot{
			Text: "Exit code 137", IsError: true, Structured: "Error: Exit code 137"}},
		{"no output", "true", bashGot{
			Text: bashNoOutput, Structured: BashResult{}}},
		{"grep without match is not a failure", "grep needle /dev/null", bashGot{
			Text: bashNoOutput, Structured: BashResult{ReturnCodeInterpretation: "No matches found"}}},
		{"grep at the end of a pipeline", "echo hay | LC_ALL=C grep needle", bashGot{
			Text: bashNoOutput, Structured: BashResult{ReturnCodeInterpretation: "No matches found"}}},
		{"grep exit 2 is a failure", "grep needle /no/such/file 2>/dev/null", bashGot{
			Text: "Exit code 2", IsError: true, Structured: "Error: Exit code 2"}},
		{"exit 1 of another command is a failure", "false", bashGot{
			Text: "Exit code 1", IsError: true, Structured: "Error: Exit code 1"}},
		{"stdin is empty", "cat", bashGot{
			Text: bashNoOutput, Structured: BashResult{}}},
		{"no pager", "echo $PAGER", bashGot{
			Text: "cat", Structured: BashResult{Stdout: "cat"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bashCall(t, t.Context(), Bash(), env, map[string]any{"command": tt.command, "description": tt.name})
			if diff := cmp.Diff(tt.want, bashSummary(r)); diff != "" {
				t.Errorf("%s: result mismatch (-want +got):\n%s", tt.command, diff)
			}
		})
	}
}

func TestBashStructuredJSON(t *testing.T) {
	// The shape the reference reports for `echo hello-oracle`.
	r := bashCall(t, t.Context(), Bash(), bashTestEnv(t), map[string]any{"command": "echo hello-oracle"})
	got, err := json.Marshal(r.Structured)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"stdout":"hello-oracle","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("tool_use_result (-want +got):\n%s", diff)
	}
}

func TestBashInfo(t *testing.T) {
	tl := Bash()
	if err := tool.Check(tl); err != nil {
		t.Fatalf("Check: %v", err)
	}
	info := tl.Info()
	if info.Name != "Bash" || info.ReadOnly || !info.AlwaysReportError || strings.TrimSpace(info.Description) == "" {
		t.Errorf("Info = %+v", info)
	}
	want := `{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"number"},
		"description":{"type":"string"},"run_in_background":{"type":"boolean"},
		"dangerouslyDisableSandbox":{"type":"boolean"}},"required":["command"],"additionalProperties":false}`
	bashCompareSchema(t, info.InputSchema, want)
	bashCompareKeyOrder(t, info.InputSchema, []string{"command", "timeout", "description", "run_in_background", "dangerouslyDisableSandbox"})
}

// bashCompareSchema compares a schema with the reference's reduced form, in
// which descriptions and $schema are dropped.
func bashCompareSchema(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w map[string]any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if g["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("$schema = %v", g["$schema"])
	}
	delete(g, "$schema")
	for name, p := range g["properties"].(map[string]any) {
		if d, _ := p.(map[string]any)["description"].(string); d == "" {
			t.Errorf("property %s has no description", name)
		}
		delete(p.(map[string]any), "description")
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("schema mismatch (-want +got):\n%s", diff)
	}
}

func bashCompareKeyOrder(t *testing.T, schema json.RawMessage, want []string) {
	t.Helper()
	var s struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(s.Properties)))
	var got []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("property order (-want +got):\n%s", diff)
	}
}

func TestBashCwd(t *testing.T) {
	env := bashTestEnv(t)
	sub := filepath.Join(env.Cwd, "sub dir")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	env.Cwd = sub
	r := bashCall(t, t.Context(), Bash(), env, map[string]any{"command": "pwd; pwd -P; cd / && pwd"})
	real, err := filepath.EvalSymlinks(sub)
	if err != nil {
		t.Fatal(err)
	}
	want := sub + "\n" + real + "\n/"
	if diff := cmp.Diff(want, r.Text()); diff != "" {
		t.Errorf("pwd (-want +got):\n%s", diff)
	}
	// cd does not carry over to the next call.
	r = bashCall(t, t.Context(), Bash(), env, map[string]any{"command": "pwd"})
	if diff := cmp.Diff(sub, r.Text()); diff != "" {
		t.Errorf("second pwd (-want +got):\n%s", diff)
	}
}

func TestBashStartFailures(t *testing.T) {
	t.Run("missing cwd", func(t *testing.T) {
		env := bashTestEnv(t)
		env.Cwd = filepath.Join(env.Cwd, "gone")
		r := bashCall(t, t.Context(), Bash(), env, map[string]any{"command": "echo hi"})
		want := bashGot{Text: "Cannot run the command: the working directory " + env.Cwd + " does not exist.", IsError: true}
		if diff := cmp.Diff(want, bashSummary(r)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("cwd is a file", func(t *testing.T) {
		env := bashTestEnv(t)
		f := filepath.Join(env.Cwd, "file")
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		env.Cwd = f
		r := bashCall(t, t.Context(), Bash(), env, map[string]any{"command": "echo hi", "run_in_background": true})
		want := bashGot{Text: "Cannot run the command: the working directory " + f + " is not a directory.", IsError: true}
		if diff := cmp.Diff(want, bashSummary(r)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("no bash in PATH", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		r := bashCall(t, t.Context(), Bash(), bashTestEnv(t), map[string]any{"command": "echo hi"})
		want := bashGot{Text: "Cannot run the command: bash was not found in PATH.", IsError: true}
		if diff := cmp.Diff(want, bashSummary(r)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("nil call", func(t *testing.T) {
		r, err := runBash(t.Context(), bashInput{Command: "echo hi"}, nil)
		if err != nil || r.Text() != "hi" || r.IsError {
			t.Errorf("runBash without a call = %q, %v, %v", r.Text(), r.IsError, err)
		}
	})
	t.Run("context already done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		r := bashCall(t, ctx, Bash(), bashTestEnv(t), map[string]any{"command": "echo hi"})
		want := bashGot{Text: "Command was aborted before completion", IsError: true, Structured: BashResult{Interrupted: true}}
		if diff := cmp.Diff(want, bashSummary(r)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
}

func TestBashHugeOutput(t *testing.T) {
	env := bashTestEnv(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := bashCall(t, t.Context(), Bash(), env, map[string]any{"command": "yes | head -c 50000000"})
	runtime.ReadMemStats(&after)

	// 25,000,000 lines of "y"; the first 15,000 are shown.
	want := strings.Repeat("y\n", 15000) + "\n\n... [24985000 lines truncated] ..."
	if diff := cmp.Diff(bashGot{Text: want, Structured: BashResult{Stdout: want}}, bashSummary(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("allocated %d bytes for 50 MB of output; want it bounded", alloc)
	}
}

func TestBashHugeStderrFailure(t *testing.T) {
	r := bashCall(t, t.Context(), Bash(), bashTestEnv(t), map[string]any{
		"command": "echo start; head -c 100000 /dev/zero | tr '\\0' x >&2; exit 5"})
	// A failure shows the head and tail of its output, 10,000 characters
	// in all: stdout's 5, stderr the rest.
	wantErr := strings.Repeat("x", 4997) + "\n\n... [1 lines truncated] ...\n\n" + strings.Repeat("x", 4998)
	want := "Exit code 5\nstart\n" + wantErr
	if diff := cmp.Diff(bashGot{Text: want, IsError: true, Structured: "Error: " + want}, bashSummary(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// bashGone reports whether process pid has ended (a zombie counts as ended:
// in a container nobody may reap it).
func bashGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// bashWaitGone fails the test unless pid ends within d.
func bashWaitGone(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !bashGone(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still runs %v later", pid, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// bashReadPid waits for a pid file written by a test command.
func bashReadPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if s := strings.TrimSpace(string(b)); err == nil && strings.HasSuffix(string(b), "\n") {
			pid, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("pid file %s: %v", path, err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBashTimeoutKillsTree(t *testing.T) {
	env := bashTestEnv(t)
	pidfile := filepath.Join(env.Cwd, "pid")
	command := fmt.Sprintf(`echo started; bash -c 'sleep 300 & echo $! > %q; wait'`, pidfile)
	start := time.Now()
	r := bashCall(t, t.Context(), Bash(), env, map[string]any{"command": command, "timeout": 200})
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v with a 200 ms timeout", d)
	}
	want := bashGot{
		Text:       "started\nCommand timed out after 200ms and was stopped",
		IsError:    true,
		Structured: BashResult{Stdout: "started", Interrupted: true, TimedOutAfterMs: 200},
	}
	if diff := cmp.Diff(want, bashSummary(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	bashWaitGone(t, bashReadPid(t, pidfile), 2*time.Second)
}

func TestBashTimeoutIgnoringSIGTERM(t *testing.T) {
	env := bashTestEnv(t)
	pidfile := filepath.Join(env.Cwd, "pid")
	command := fmt.Sprintf(`trap '' TERM; sleep 300 & echo $! > %q; trap '' TERM; wait; wait`, pidfile)
	r := bashCall(t, t.Context(), Bash(), env, map[string]any{"command": command, "timeout": 100})
	if !r.IsError || !strings.Contains(r.Text(), "timed out after 100ms") {
		t.Errorf("result = %q, is_error %v", r.Text(), r.IsError)
	}
	bashWaitGone(t, bashReadPid(t, pidfile), 2*time.Second)
}

func TestBashCancelKillsTree(t *testing.T) {
	env := bashTestEnv(t)
	pidfile := filepath.Join(env.Cwd, "pid")
	command := fmt.Sprintf(`echo partial; sleep 300 & echo $! > %q; wait`, pidfile)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var cancelled time.Time
	go func() {
		bashReadPid(t, pidfile)
		cancelled = time.Now()
		cancel()
	}()
	r := bashCall(t, ctx, Bash(), env, map[string]any{"command": command})
	if d := time.Since(cancelled); d > time.Second {
		t.Errorf("returned %v after cancellation", d)
	}
	want := bashGot{
		Text:       "partial\nCommand was aborted before completion",
		IsError:    true,
		Structured: BashResult{Stdout: "partial", Interrupted: true},
	}
	if diff := cmp.Diff(want, bashSummary(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	bashWaitGone(t, bashReadPid(t, pidfile), 2*time.Second)
}

func TestBashLeftoverChildDoesNotHang(t *testing.T) {
	env := bashTestEnv(t)
	pidfile := filepath.Join(env.Cwd, "pid")
	start := time.Now()
	r := bashCall(t, t.Context(), Bash(), env, map[string]any{
		"command": fmt.Sprintf(`sleep 100 & echo $! > %q; echo done`, pidfile)})
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v: waited for the leftover child", d)
	}
	pid := bashReadPid(t, pidfile)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if diff := cmp.Diff(bashGot{Text: "done", Structured: BashResult{Stdout: "done"}}, bashSummary(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBashClamp(t *testing.T) {
	tests := []struct {
		ms   float64
		want time.Duration
	}{
		{0, bashDefaultTimeout},
		{-5, bashDefaultTimeout},
		{200, 200 * time.Millisecond},
		{1.5, 1500 * time.Microsecond},
		{0.0000001, time.Millisecond},
		{600000, bashMaxTimeout},
		{9e99, bashMaxTimeout},
	}
	for _, tt := range tests {
		if got := bashClamp(tt.ms, bashDefaultTimeout, bashMaxTimeout); got != tt.want {
			t.Errorf("bashClamp(%v) = %v, want %v", tt.ms, got, tt.want)
		}
	}
}

// bashReferenceText applies the trimming and truncation rule to a whole
// string, to check bashCapture against.
func bashReferenceText(s string, limit int, lead bashLead) string {
	s = strings.TrimRightFunc(s, bashIsSpace)
	if i := strings.IndexFunc(s, bashNotSpace); i < 0 {
		s = ""
	} else if lead == bashLeadSpace {
		s = s[i:]
	} else if nl := strings.LastIndexByte(s[:i], '\n'); nl >= 0 {
		s = s[nl+1:]
	}
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	rest := string(r[limit:])
	return string(r[:limit]) + fmt.Sprintf("\n\n... [%d lines truncated] ...", strings.Count(rest, "\n")+1)
}

func TestBashCapture(t *testing.T) {
	inputs := []string{
		"", "\n\n", "  \n \t", "abc", "abc\n", "a\nb\nc\nd\ne\nf\n", "\n\n  x\ny\n", "x" + strings.Repeat("\n", 40),
		strings.Repeat("ab\n", 20) + strings.Repeat(" \n", 30), "ééééééééé\nü\nü\n", "héllo wörld\nこんにちは\n\n",
		strings.Repeat("\n", 20) + "late", strings.Repeat("\n ", 20) + "   late\nlater",
		"a b c d e f g h i j k l m n o p q r s t\n\n\nend\n  \n", "\u00a0\u2003x\u2003\n",
	}
	for _, in := range inputs {
		for _, limit := range []int{1, 2, 3, 5, 8, 100} {
			for _, chunk := range []int{1, 2, 3, 7, 1000} {
				for _, lead := range []bashLead{bashLeadBlankLines, bashLeadSpace} {
					c := newBashCapture(limit, lead)
					for b := []byte(in); len(b) > 0; {
						n := min(chunk, len(b))
						if k, err := c.Write(b[:n]); k != n || err != nil {
							t.Fatalf("Write = %d, %v", k, err)
						}
						b = b[n:]
					}
					want := bashReferenceText(in, limit, lead)
					if got := c.text(); got != want {
						t.Errorf("%q limit %d chunk %d lead %d:\n got %q\nwant %q", in, limit, chunk, lead, got, want)
					}
				}
			}
		}
	}
}

func TestBashLastCommand(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"grep foo bar", []string{"grep", "foo", "bar"}},
		{"cat x | grep -v 'a|b'", []string{"grep", "-v", "a|b"}},
		{"make && LANG=C /usr/bin/diff a b", []string{"/usr/bin/diff", "a", "b"}},
		{"echo hi; test -f x", []string{"test", "-f", "x"}},
		{`echo "a;b"`, []string{"echo", "a;b"}},
		{"grep x y 2>&1", []string{"grep", "x", "y", "2>&1"}},
		{"grep x y &>/dev/null", []string{"grep", "x", "y", "&>/dev/null"}},
		{"sleep 1 & grep x y", []string{"grep", "x", "y"}},
		{"grep x $(ls)", nil},
		{"echo 'unterminated", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, bashLastCommand(tt.line)); diff != "" {
			t.Errorf("bashLastCommand(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}

func BenchmarkBashEcho(b *testing.B) {
	env := bashTestEnv(b)
	tl := Bash()
	input := json.RawMessage(`{"command":"echo hello-oracle"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r, err := tl.Run(ctx, &tool.Call{Input: input, Env: env})
		if err != nil || r.Text() != "hello-oracle" {
			b.Fatalf("Run = %q, %v", r.Text(), err)
		}
	}
}
