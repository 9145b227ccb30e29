package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/wire"
	"github.com/google/go-cmp/cmp"
)

var updateStreamJSON = flag.Bool("update", false, "rewrite the golden files of testdata/streamjson")

// sdkArgs are the flags the SDKs always pass.
var sdkArgs = []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}

// sjSession is one run of the driver, fed through a pipe.
type sjSession struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan string
	seen   []string // every stdout line read so far
	code   chan int
	stderr *lockedBuffer
	dir    string
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startSJ runs the command with the SDK's flags and args against srv.
func startSJ(t *testing.T, srv *agentlooptest.Server, args ...string) *sjSession {
	t.Helper()
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	dir := t.TempDir()
	t.Chdir(dir)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &sjSession{t: t, in: inW, lines: make(chan string, 1024), code: make(chan int, 1), stderr: &lockedBuffer{}, dir: dir}
	go func() {
		code := run(context.Background(), append(slices.Clone(sdkArgs), args...), inR, outW, s.stderr)
		outW.Close()
		inR.Close()
		s.code <- code
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
		io.Copy(io.Discard, outR)
	}()
	t.Cleanup(func() { inW.Close() })
	return s
}

// send writes one stdin line.
func (s *sjSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("writing %q: %v", line, err)
	}
}

// until reads stdout until a line contains every one of subs, and
// returns it.
func (s *sjSession) until(subs ...string) string {
	s.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("stdout ended before a line with %q; stderr %q; lines:\n%s", subs, s.stderr.String(), strings.Join(s.seen, "\n"))
			}
			s.seen = append(s.seen, l)
			if containsAll(l, subs) {
				return l
			}
		case <-timeout:
			s.t.Fatalf("no line with %q in time; lines:\n%s", subs, strings.Join(s.seen, "\n"))
		}
	}
}

func containsAll(l string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(l, sub) {
			return false
		}
	}
	return true
}

// finish closes stdin, reads stdout to its end and returns the exit code.
func (s *sjSession) finish() int {
	s.t.Helper()
	s.in.Close()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				select {
				case c := <-s.code:
					return c
				case <-timeout:
					s.t.Fatal("the command did not return")
				}
			}
			s.seen = append(s.seen, l)
		case <-timeout:
			s.t.Fatalf("stdout did not end; lines:\n%s", strings.Join(s.seen, "\n"))
		}
	}
}

// initLine is an initialize request as the TypeScript SDK writes it.
func initLine(id string, extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"request_id":"` + id + `","type":"control_request","request":{"subtype":"initialize","systemPrompt":[""]` + extra + `}}`
}

func userLine(text string) string {
	return `{"type":"user","session_id":"","message":{"role":"user","content":[{"type":"text","text":` + quoteJSON(text) + `}]},"parent_tool_use_id":null}`
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var (
	uuidRE  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	msgIDRE = regexp.MustCompile(`^msg_[A-Za-z0-9_]+$`)
)

// volatileKeys are replaced by a placeholder in golden files: numbers
// that vary from run to run, and lists that grow as agentloop does.
var volatileKeys = map[string]bool{
	"duration_ms": true, "duration_api_ms": true, "pid": true, "claude_code_version": true,
	"tools": true, "slash_commands": true, "commands": true, "models": true, "skills": true,
	"timestamp": true, "cwd": true, "memory_paths": true, "transcript_path": true, "plugins": true,
	"agents": true, "ttft_ms": true, "agentloop_version": true,
	"modelUsage": true, "total_cost_usd": true, "apiKeySource": true, "output_style": true,
	// The Bash sandbox is on by default where the kernel has Landlock.
	"sandbox_enabled": true, "sandbox_unavailable": true,
}

// normalise rewrites the lines for a golden file: uuids and message ids
// become numbered placeholders in order of appearance, volatile members
// a fixed mark.
func normalise(t *testing.T, lines []string) string {
	t.Helper()
	names := map[string]string{}
	var walk func(key string, v any) any
	walk = func(key string, v any) any {
		if volatileKeys[key] {
			return "<" + key + ">"
		}
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) { // numbered in a fixed order
				x[k] = walk(k, x[k])
			}
		case []any:
			for i, e := range x {
				x[i] = walk(key, e)
			}
		case string:
			if uuidRE.MatchString(x) || msgIDRE.MatchString(x) {
				if names[x] == "" {
					names[x] = fmt.Sprintf("<id%d>", len(names)+1)
				}
				return names[x]
			}
		}
		return v
	}
	var b strings.Builder
	for _, l := range lines {
		var v any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("stdout line is not JSON: %q", l)
		}
		out, err := json.Marshal(walk("", v))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
		b.WriteByte('\n')
	}
	return b.String()
}

// golden compares the normalised lines with testdata/streamjson/name.jsonl.
func golden(t *testing.T, name string, lines []string) {
	t.Helper()
	got := normalise(t, lines)
	path := filepath.Join(goldenDir, name+".jsonl")
	if *updateStreamJSON {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// goldenDir is testdata/streamjson, found before the tests change the
// working directory.
var goldenDir = func() string {
	wd, _ := os.Getwd()
	return filepath.Join(wd, "testdata", "streamjson")
}()

// kinds are the type (and subtype) of each line.
func kinds(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		var head struct {
			Type     string `json:"type"`
			Subtype  string `json:"subtype"`
			State    string `json:"state"`
			Response struct {
				Subtype string `json:"subtype"`
			} `json:"response"`
			Request struct {
				Subtype string `json:"subtype"`
			} `json:"request"`
		}
		if err := json.Unmarshal([]byte(l), &head); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		k := head.Type
		switch {
		case head.Type == "system" && head.State != "":
			k += "/" + head.Subtype + "/" + head.State
		case head.Subtype != "":
			k += "/" + head.Subtype
		case head.Response.Subtype != "":
			k += "/" + head.Response.Subtype
		case head.Request.Subtype != "":
			k += "/" + head.Request.Subtype
		}
		out = append(out, k)
	}
	return out
}

func TestStreamJSONSinglePrompt(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Hello there."))
	s := startSJ(t, srv)
	s.send(initLine("init1", ""))
	s.send(userLine("Say hello"))
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	golden(t, "single", s.seen)
	want := []string{"control_response/success", "system/session_state_changed/running", "system/init", "assistant", "result/success", "system/session_state_changed/idle"}
	if diff := cmp.Diff(want, kinds(t, s.seen)); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	var ans struct {
		Response struct {
			Response map[string]json.RawMessage `json:"response"`
		} `json:"response"`
	}
	if err := json.Unmarshal([]byte(s.seen[0]), &ans); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"commands", "agents", "output_style", "available_output_styles", "models", "account", "claude_code_version", "pid", "current_permission_mode"} {
		if _, ok := ans.Response.Response[k]; !ok {
			t.Errorf("initialize answer has no %s: %s", k, s.seen[0])
		}
	}
	if got := srv.Requests()[0].SystemText(); !strings.Contains(got, sdkMinimalPrompt) {
		t.Errorf(`systemPrompt [""] sent system %q, want the minimal prompt`, got)
	}
	if s.stderr.String() != "" {
		t.Errorf("stderr %q", s.stderr.String())
	}
}

func TestStreamJSONThreeQueued(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"), agentlooptest.Text("three"))
	s := startSJ(t, srv, "--replay-user-messages")
	s.send(initLine("init1", `"appendSystemPrompt":"APPENDED"`))
	for i, p := range []string{"first", "second", "third"} {
		s.send(`{"type":"user","message":{"role":"user","content":"` + p + `"},"parent_tool_use_id":null,"session_id":"","uuid":"00000000-0000-4000-8000-00000000000` + fmt.Sprint(i+1) + `"}`)
	}
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	// Replayed lines are written as the messages are read, the turns'
	// lines as they run: the two interleave, so they are checked apart.
	var replays, rest []string
	for _, l := range s.seen {
		if strings.Contains(l, `"isReplay":true`) {
			replays = append(replays, l)
		} else {
			rest = append(rest, l)
		}
	}
	golden(t, "three_queued", rest)
	for i, p := range []string{"first", "second", "third"} {
		if i >= len(replays) || !strings.Contains(replays[i], `"content":"`+p+`"`) || !strings.Contains(replays[i], fmt.Sprintf(`"uuid":"00000000-0000-4000-8000-00000000000%d"`, i+1)) {
			t.Errorf("replayed lines %q, want %s with its uuid as number %d", replays, p, i+1)
		}
	}
	if n := srv.Len(); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	if got := srv.Requests()[2].LastUserText(); got != "third" {
		t.Errorf("third request's prompt %q", got)
	}
	if got := srv.Requests()[0].SystemText(); !strings.Contains(got, "APPENDED") {
		t.Errorf("appendSystemPrompt not in the system prompt: %q", got)
	}
}

func TestStreamJSONInterrupt(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Reply{Content: agentlooptest.Text("never").Content, Delay: time.Minute}, agentlooptest.Text("after"))
	srv.AllowExhausted()
	s := startSJ(t, srv)
	s.send(initLine("init1", ""))
	s.send(userLine("slow one"))
	s.until(`"subtype":"init"`)
	s.send(userLine("queued one"))
	time.Sleep(50 * time.Millisecond) // let the queued line be read before the interrupt
	s.send(`{"request_id":"int1","type":"control_request","request":{"subtype":"interrupt"}}`)
	ans := s.until(`"request_id":"int1"`)
	if !strings.Contains(ans, `"still_queued":["`) {
		t.Errorf("interrupt answer %s, want the queued message in still_queued", ans)
	}
	// The answer may come before or after the next turn's lines (even its
	// result, on a loaded machine): wait for that result only if it has
	// not been seen yet.
	next := []string{`"subtype":"success"`, `"type":"result"`}
	if !slices.ContainsFunc(s.seen, func(l string) bool { return containsAll(l, next) }) {
		s.until(next...)
	}
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	// The answer may come before or after the next turn's first lines:
	// it is checked above, and left out of the golden file.
	golden(t, "interrupt", slices.DeleteFunc(slices.Clone(s.seen), func(l string) bool { return l == ans }))
	k := kinds(t, s.seen)
	iRes, iAns := slices.Index(k, "result/error_during_execution"), slices.Index(s.seen, ans)
	if iRes < 0 || iRes > iAns {
		t.Errorf("want the interrupted turn's result before the interrupt's answer: %q", k)
	}
}

func TestStreamJSONSetters(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	s := startSJ(t, srv)
	s.send(initLine("init1", ""))
	s.until(`"request_id":"init1"`)
	s.send(`{"request_id":"m1","type":"control_request","request":{"subtype":"set_permission_mode","mode":"acceptEdits"}}`)
	s.until(`"request_id":"m1"`)
	s.send(`{"request_id":"m2","type":"control_request","request":{"subtype":"set_model","model":"claude-opus-4-1"}}`)
	s.until(`"request_id":"m2"`)
	s.send(`{"request_id":"m3","type":"control_request","request":{"subtype":"set_max_thinking_tokens","max_thinking_tokens":2048}}`)
	s.until(`"request_id":"m3"`)
	s.send(`{"request_id":"m4","type":"control_request","request":{"subtype":"set_permission_mode","mode":"yolo"}}`)
	s.until(`"request_id":"m4"`)
	s.send(`{"request_id":"m5","type":"control_request","request":{"subtype":"mcp_status"}}`)
	s.until(`"request_id":"m5"`)
	s.send(userLine("go"))
	s.until(`"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	golden(t, "setters", s.seen)
	req := srv.Requests()[0]
	var m string
	if err := json.Unmarshal(req.Field("model"), &m); err != nil || m != "claude-opus-4-1" {
		t.Errorf("model sent %q (%v), want claude-opus-4-1", m, err)
	}
	if !strings.Contains(string(req.Field("thinking")), "2048") {
		t.Errorf("thinking sent %s, want a budget of 2048", req.Field("thinking"))
	}
	all := strings.Join(s.seen, "\n")
	for _, want := range []string{`"permissionMode":"acceptEdits"`, `"mode":"acceptEdits"`, `"mcpServers":[]`} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s in the output", want)
		}
	}
}

func TestStreamJSONUnsupportedAndMalformed(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("still fine"))
	s := startSJ(t, srv)
	s.send(initLine("init1", ""))
	s.until(`"request_id":"init1"`)
	s.send(`{"request_id":"u1","type":"control_request","request":{"subtype":"get_frobnicator"}}`)
	s.until(`"request_id":"u1"`)
	s.send(`{"request_id":"u2","type":"control_request","request":{"subtype":"get_settings"}}`)
	s.until(`"request_id":"u2"`)
	s.send(`{not json`)
	s.send(`{"request_id":"bad1","type":"control_request","request":{"subtype":"set_permission_mode"}}`)
	s.until(`"request_id":"bad1"`)
	s.send(`{"type":"control_response","response":{"subtype":"success","request_id":"nobody","response":{}}}`)
	s.send(userLine("still there?"))
	s.until(`"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	golden(t, "unsupported_malformed", s.seen)
	errOut := s.stderr.String()
	for _, want := range []string{"agentloop: stdin: line 4", "agentloop: stdin: line 5", `request "nobody"`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q, want %q", errOut, want)
		}
	}
}

// TestStreamJSONEarlyEOF: two prompts and the end of stdin arrive before
// anything was written; both run, then the command exits 0.
func TestStreamJSONEarlyEOF(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("A"), agentlooptest.Text("B"))
	s := startSJ(t, srv)
	s.send(initLine("init1", "") + "\n" + userLine("one") + "\n" + userLine("two"))
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	golden(t, "early_eof", s.seen)
	if n := strings.Count(strings.Join(s.seen, "\n"), `"type":"result"`); n != 2 {
		t.Errorf("%d results, want 2", n)
	}
}

func TestStreamJSONErrorResultExits1(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Error(400, "invalid_request_error", "prompt is too long"))
	s := startSJ(t, srv)
	s.send(initLine("init1", ""))
	s.send(userLine("hi"))
	if code := s.finish(); code != 1 {
		t.Fatalf("exit %d, want 1 after an error result", code)
	}
	if k := kinds(t, s.seen); k[len(k)-1] != "system/session_state_changed/idle" {
		t.Errorf("last line %s, want idle after the result", k[len(k)-1])
	}
}

// TestStreamJSONCanUseTool: with --permission-prompt-tool stdio a tool
// call is put to the host as can_use_tool; the host's allow with an
// updatedInput runs the changed call.
func TestStreamJSONCanUseTool(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Write", map[string]any{"file_path": "asked.txt", "content": "model text\n"}),
		agentlooptest.Text("done"))
	s := startSJ(t, srv, "--permission-prompt-tool", "stdio")
	s.send(initLine("init1", ""))
	s.send(userLine("write a file"))
	req := s.until(`"subtype":"can_use_tool"`)
	var r struct {
		RequestID string `json:"request_id"`
		Request   struct {
			ToolName  string         `json:"tool_name"`
			Input     map[string]any `json:"input"`
			ToolUseID string         `json:"tool_use_id"`
		} `json:"request"`
	}
	if err := json.Unmarshal([]byte(req), &r); err != nil {
		t.Fatal(err)
	}
	if r.Request.ToolName != "Write" {
		t.Fatalf("can_use_tool for %q", r.Request.ToolName)
	}
	changed := filepath.Join(s.dir, "changed.txt")
	s.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + r.RequestID + `","response":{"behavior":"allow","updatedInput":{"file_path":` + quoteJSON(changed) + `,"content":"host text\n"},"toolUseID":"` + r.Request.ToolUseID + `"}}}`)
	s.until(`"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	k := kinds(t, s.seen)
	i := slices.Index(k, "control_request/can_use_tool")
	if i < 1 || k[i-1] != "system/session_state_changed/requires_action" || !slices.Contains(k[i:], "system/session_state_changed/running") {
		t.Errorf("lines %q: want requires_action before can_use_tool and running after it", k)
	}
	if b, err := os.ReadFile(changed); err != nil || string(b) != "host text\n" {
		t.Errorf("changed.txt = %q, %v; want the host's content", b, err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "asked.txt")); err == nil {
		t.Error("the model's path was written despite updatedInput")
	}
}

// TestHostLinkCancel: a call whose context ends sends
// control_cancel_request, and the late answer is dropped quietly; after
// stdin ends, calls fail with errHostGone.
func TestHostLinkCancel(t *testing.T) {
	var buf lockedBuffer
	bw := bufio.NewWriter(&buf)
	h := newHostLink(&lineOut{w: bw})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.Call(ctx, "can_use_tool", map[string]any{"tool_name": "Bash", "input": map[string]any{}})
		done <- err
	}()
	var id string
	for deadline := time.Now().Add(5 * time.Second); id == ""; {
		if time.Now().After(deadline) {
			t.Fatal("no request written")
		}
		h.mu.Lock()
		for k := range h.pending {
			id = k
		}
		h.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	out := buf.String()
	if !strings.Contains(out, `"type":"control_cancel_request"`) || !strings.Contains(out, id) {
		t.Errorf("output %q, want a control_cancel_request for %s", out, id)
	}
	if !h.answer(&wire.ControlResponse{RequestID: id}) {
		t.Error("a late answer to a cancelled call was reported as unknown")
	}
	h.close()
	if _, err := h.Call(context.Background(), "hook_callback", nil); err != errHostGone {
		t.Errorf("Call after close = %v, want errHostGone", err)
	}
}

// TestStreamJSONFlags: stream-json input and the flags that go with it
// are accepted as the SDKs pass them, and refused where they cannot work.
func TestStreamJSONFlags(t *testing.T) {
	ok := []struct {
		args []string
		want func(*sdkFlags) bool
	}{
		{[]string{"--input-format=stream-json"}, func(f *sdkFlags) bool { return f.inputFormat == "stream-json" }},
		{[]string{"--permission-prompt-tool=stdio"}, func(f *sdkFlags) bool { return f.permissionPromptTool == "stdio" }},
		{[]string{"--permission-prompt-tool", "stdio"}, func(f *sdkFlags) bool { return f.permissionPromptTool == "stdio" }},
		{[]string{"--await-initialize", "--initialize-fields=settings,disallowedTools"}, func(f *sdkFlags) bool { return f.awaitInit }},
		{[]string{"--replay-user-messages"}, func(f *sdkFlags) bool { return f.replayUser }},
		{[]string{"--managed-settings-in-initialize"}, func(*sdkFlags) bool { return true }},
	}
	for _, tc := range ok {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c, err := parseArgs(append(slices.Clone(sdkArgs), tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.warnings) != 0 || !tc.want(&c.sdk) {
				t.Errorf("warnings %q, flags %+v", c.warnings, c.sdk)
			}
		})
	}
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"-p", "hi", "--input-format", "stream-json", "--verbose"}, "--input-format stream-json needs --output-format stream-json"},
		{append(slices.Clone(sdkArgs), "a prompt"), "takes no prompt argument"},
		{[]string{"-p", "hi", "--permission-prompt-tool=stdio"}, "--permission-prompt-tool stdio needs --input-format stream-json"},
		{append(slices.Clone(sdkArgs), "--permission-prompt-tool=mcp__perm__ask"), "not supported yet"},
	}
	for _, tc := range bad {
		if _, err := parseArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestStreamJSONInitializeDelivery: with --await-initialize a user line
// written before initialize waits for it; settings, disallowedTools and
// mcpServers delivered in initialize are applied and their *_applied
// answers say so; title becomes one system/session_title_changed line;
// fields not honoured are warned about.
func TestStreamJSONInitializeDelivery(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	s := startSJ(t, srv, "--await-initialize", "--initialize-fields=settings,disallowedTools")
	s.send(userLine("held"))
	s.send(initLine("init1", `"settings":{"permissions":{"deny":["WebFetch"]}},"disallowedTools":["WebSearch"],"mcpServers":{},"title":"T","managedSettings":{}`))
	ans := s.until(`"request_id":"init1"`)
	for _, want := range []string{`"settings_applied":true`, `"disallowed_tools_applied":true`, `"mcp_servers_applied":true`, `"managed_settings_applied":false`} {
		if !strings.Contains(ans, want) {
			t.Errorf("initialize answer %s, want %s", ans, want)
		}
	}
	s.until(`"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	if got := srv.Requests()[0].ToolNames(); slices.Contains(got, "WebSearch") {
		t.Errorf("tools sent %q include WebSearch, disallowed in initialize", got)
	}
	errOut := s.stderr.String()
	for _, want := range []string{"initialize: managedSettings (managed_settings_applied is false) is ignored"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q, want %q", errOut, want)
		}
	}
	if strings.Contains(errOut, "title") {
		t.Errorf("stderr %q warns about title, which is honoured", errOut)
	}
	var titles []string
	for _, l := range s.seen {
		if strings.Contains(l, `"subtype":"session_title_changed"`) {
			titles = append(titles, l)
		}
	}
	if len(titles) != 1 || !strings.Contains(titles[0], `"title":"T"`) {
		t.Errorf("session_title_changed lines %q; want one with title T", titles)
	}
}

// TestStreamJSONWithoutInitialize: a host that never initializes (its
// first line is a user message) gets a session from the flags alone; a
// late initialize is refused.
func TestStreamJSONWithoutInitialize(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("no init needed"))
	s := startSJ(t, srv)
	s.send(userLine("hi"))
	s.until(`"type":"result"`)
	s.send(initLine("late", ""))
	ans := s.until(`"request_id":"late"`)
	if !strings.Contains(ans, `"subtype":"error"`) || !strings.Contains(ans, "first line") {
		t.Errorf("late initialize answered %s", ans)
	}
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
}

// TestStreamJSONHookCallback: a hook registered in initialize is called
// on the host as hook_callback, and its answer is used.
func TestStreamJSONHookCallback(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("hooked"))
	s := startSJ(t, srv)
	s.send(initLine("init1", `"hooks":{"UserPromptSubmit":[{"hookCallbackIds":["hook_0"]}]}`))
	ans := s.until(`"request_id":"init1"`)
	if !strings.Contains(ans, `"hooks_applied":true`) {
		t.Errorf("initialize answer %s, want hooks_applied", ans)
	}
	s.send(userLine("prompt"))
	req := s.until(`"subtype":"hook_callback"`)
	var r struct {
		RequestID string `json:"request_id"`
		Request   struct {
			CallbackID string `json:"callback_id"`
		} `json:"request"`
	}
	if err := json.Unmarshal([]byte(req), &r); err != nil || r.Request.CallbackID != "hook_0" {
		t.Fatalf("hook_callback %s (%v)", req, err)
	}
	s.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + r.RequestID + `","response":{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"CONTEXT-FROM-HOST"}}}}`)
	s.until(`"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	body, _ := json.Marshal(srv.Requests()[0].Field("messages"))
	if !strings.Contains(string(body), "CONTEXT-FROM-HOST") {
		t.Errorf("the hook's additional context was not sent: %s", body)
	}
}

// TestStreamJSONSIGTERM: SIGTERM mid-turn, with stdin still open, ends the
// command promptly with 143.
func TestStreamJSONSIGTERM(t *testing.T) {
	reply, arrived := stalled()
	srv := agentlooptest.NewTB(t, reply)
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Chdir(t.TempDir())
	inR, inW := io.Pipe()
	defer inW.Close()
	go func() {
		io.WriteString(inW, initLine("init1", "")+"\n"+userLine("wait")+"\n")
	}()
	sigs := make(chan os.Signal, 1)
	go func() {
		<-arrived
		sigs <- syscall.SIGTERM
	}()
	var out, errOut lockedBuffer
	done := make(chan int, 1)
	go func() { done <- runSignalled(sigs, func() {}, slices.Clone(sdkArgs), inR, &out, &errOut) }()
	select {
	case code := <-done:
		if code != 143 {
			t.Errorf("exit %d, want 143; stderr %q", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the command did not end after SIGTERM")
	}
	if !strings.Contains(out.String(), `"type":"result"`) {
		t.Errorf("stdout %q, want the cancelled turn's result", out.String())
	}
}

// TestStreamJSONOtherControls: get_context_usage, rewind_files,
// mcp_reconnect and cancel_async_message are answered.
func TestStreamJSONOtherControls(t *testing.T) {
	slow := agentlooptest.Text("slow")
	slow.Delay = 2 * time.Second
	srv := agentlooptest.NewTB(t, slow, agentlooptest.Text("kept"))
	s := startSJ(t, srv)
	s.send(initLine("init1", ""))
	s.until(`"request_id":"init1"`)
	s.send(`{"request_id":"c1","type":"control_request","request":{"subtype":"get_context_usage"}}`)
	if ans := s.until(`"request_id":"c1"`); !strings.Contains(ans, `"subtype":"success"`) || !strings.Contains(ans, `"categories"`) {
		t.Errorf("get_context_usage answered %s", ans)
	}
	s.send(`{"request_id":"c2","type":"control_request","request":{"subtype":"rewind_files","user_message_id":"00000000-0000-4000-8000-00000000dead","dry_run":true}}`)
	if ans := s.until(`"request_id":"c2"`); !strings.Contains(ans, `"request_id":"c2"`) {
		t.Errorf("rewind_files answered %s", ans)
	}
	s.send(`{"request_id":"c3","type":"control_request","request":{"subtype":"mcp_reconnect","serverName":"nope"}}`)
	if ans := s.until(`"request_id":"c3"`); !strings.Contains(ans, `"subtype":"error"`) || !strings.Contains(ans, "nope") {
		t.Errorf("mcp_reconnect of an unknown server answered %s", ans)
	}
	s.send(userLine("slow turn"))
	s.until(`"subtype":"init"`)
	s.send(`{"type":"user","message":{"role":"user","content":"withdrawn"},"parent_tool_use_id":null,"session_id":"","uuid":"00000000-0000-4000-8000-0000000000aa"}`)
	s.send(`{"type":"user","message":{"role":"user","content":"kept"},"parent_tool_use_id":null,"session_id":""}`)
	s.send(`{"request_id":"c4","type":"control_request","request":{"subtype":"cancel_async_message","message_uuid":"00000000-0000-4000-8000-0000000000aa"}}`)
	if ans := s.until(`"request_id":"c4"`); !strings.Contains(ans, `"cancelled":true`) {
		t.Errorf("cancel_async_message answered %s", ans)
	}
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	if n := srv.Len(); n != 2 || srv.Requests()[1].LastUserText() != "kept" {
		t.Errorf("%d requests; the withdrawn message must not run", n)
	}
}

// TestStreamJSONSDKMCPServer: an in-process MCP server of the host,
// declared in initialize, is reached over mcp_message.
func TestStreamJSONSDKMCPServer(t *testing.T) {
	t.Run("manifests", func(t *testing.T) { testSDKMCPServer(t, true) })
	t.Run("handshake", func(t *testing.T) { testSDKMCPServer(t, false) })
}

func testSDKMCPServer(t *testing.T, manifests bool) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "mcp__calc__add", map[string]any{"a": 2, "b": 3}),
		agentlooptest.Text("five"))
	s := startSJ(t, srv, "--allowedTools", "mcp__calc__add")
	initResult := `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"calc","version":"1.0.0"}}`
	toolsResult := `{"tools":[{"name":"add","description":"Add two numbers","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}]}`
	if manifests {
		s.send(initLine("init1", `"sdkMcpServers":["calc"],"sdkMcpServerManifests":{"calc":{"initializeResult":`+initResult+`,"toolsListResult":`+toolsResult+`}}`))
	} else {
		s.send(initLine("init1", `"sdkMcpServers":["calc"]`))
	}
	// The fake host answers every mcp_message until a line with stop.
	serve := func(stop ...string) {
		for {
			l := s.until(`"type":`)
			if containsAll(l, stop) {
				return
			}
			if !strings.Contains(l, `"subtype":"mcp_message"`) {
				continue
			}
			var r struct {
				RequestID string `json:"request_id"`
				Request   struct {
					Message struct {
						ID     *json.RawMessage `json:"id"`
						Method string           `json:"method"`
					} `json:"message"`
				} `json:"request"`
			}
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			id := "0"
			if r.Request.Message.ID != nil {
				id = string(*r.Request.Message.ID)
			}
			result := `{}`
			switch r.Request.Message.Method {
			case "initialize":
				result = initResult
			case "tools/list":
				result = toolsResult
			case "tools/call":
				result = `{"content":[{"type":"text","text":"sum=5"}]}`
			}
			s.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + r.RequestID + `","response":{"mcp_response":{"jsonrpc":"2.0","id":` + id + `,"result":` + result + `}}}}`)
		}
	}
	s.send(userLine("add 2 and 3"))
	serve(`"type":"result"`)
	// Reconnecting a host server needs the host again (without manifests).
	s.send(`{"request_id":"rc1","type":"control_request","request":{"subtype":"mcp_reconnect","serverName":"calc"}}`)
	serve(`"request_id":"rc1"`)
	if l := s.seen[len(s.seen)-1]; !strings.Contains(l, `"subtype":"success"`) {
		t.Errorf("mcp_reconnect answered %s", l)
	}
	// A message the host's server starts (a ping) reaches the engine's
	// client, whose answer goes back as mcp_response.
	s.send(`{"request_id":"hm1","type":"control_request","request":{"subtype":"mcp_message","server_name":"calc","message":{"jsonrpc":"2.0","id":9,"method":"ping"}}}`)
	serve(`"request_id":"hm1"`)
	if l := s.seen[len(s.seen)-1]; !containsAll(l, []string{`"subtype":"success"`, `"mcp_response"`, `"id":9`, `"result"`}) {
		t.Errorf("host mcp_message answered %s", l)
	}
	s.send(`{"request_id":"hm2","type":"control_request","request":{"subtype":"mcp_message","server_name":"nosuch","message":{"jsonrpc":"2.0","id":10,"method":"ping"}}}`)
	serve(`"request_id":"hm2"`)
	if l := s.seen[len(s.seen)-1]; !containsAll(l, []string{`"subtype":"error"`, `nosuch`}) {
		t.Errorf("mcp_message for an unknown server answered %s", l)
	}
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	if len(srv.Requests()) < 2 {
		t.Fatalf("%d requests", len(srv.Requests()))
	}
	res, ok := srv.Requests()[1].ToolResult("toolu_1")
	if b, _ := json.Marshal(res); !ok || !strings.Contains(string(b), "sum=5") {
		t.Errorf("tool result %s, want sum=5; stderr %q", b, s.stderr.String())
	}
}

// TestStreamJSONInterruptPendingPermission: an interrupt while a
// can_use_tool request is pending withdraws it with
// control_cancel_request; the host's late answer is dropped quietly.
func TestStreamJSONInterruptPendingPermission(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Write", map[string]any{"file_path": "x.txt", "content": "x\n"}),
		agentlooptest.Text("next turn"))
	s := startSJ(t, srv, "--permission-prompt-tool=stdio")
	s.send(initLine("init1", ""))
	s.send(userLine("write"))
	req := s.until(`"subtype":"can_use_tool"`)
	var r struct {
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal([]byte(req), &r); err != nil {
		t.Fatal(err)
	}
	s.send(`{"request_id":"int1","type":"control_request","request":{"subtype":"interrupt"}}`)
	s.until(`"type":"control_cancel_request"`, r.RequestID)
	s.until(`"request_id":"int1"`)
	s.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + r.RequestID + `","response":{"behavior":"allow","updatedInput":{}}}}`)
	s.send(userLine("again"))
	s.until(`"subtype":"success"`, `"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	if strings.Contains(s.stderr.String(), "not pending") {
		t.Errorf("the late answer was reported: %q", s.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(s.dir, "x.txt")); err == nil {
		t.Error("the interrupted call ran")
	}
	all := strings.Join(s.seen, "\n")
	if !strings.Contains(all, `"subtype":"error_during_execution"`) {
		t.Error("no error result for the interrupted turn")
	}
}

// FuzzStreamJSONStdin: whatever the host writes, the driver neither
// panics nor hangs, and it exits 0 or 1.
func FuzzStreamJSONStdin(f *testing.F) {
	f.Add(initLine("i", "") + "\n" + userLine("hi") + "\n")
	f.Add(`{"type":"user","message":{"role":"user","content":[]}}` + "\n" + `{"type":"control_request","request_id":"x","request":{"subtype":"interrupt"}}`)
	f.Add(`{"type":"control_response","response":{"subtype":"error","request_id":"zz","error":"no"}}` + "\n{\n\x00\n")
	f.Add(initLine("i", `"hooks":{"Nope":[{"hookCallbackIds":["h"]}]}`) + "\n")
	f.Add(`{"type":"control_request","request_id":"q","request":{"subtype":"set_model","model":null}}` + "\n" + `{"type":"keep_alive"}`)
	srv := agentlooptest.NewTB(f)
	srv.AllowExhausted()
	srv.Lenient()
	f.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	f.Setenv("ANTHROPIC_API_KEY", "sk-test")
	f.Chdir(f.TempDir())
	f.Fuzz(func(t *testing.T, stdin string) {
		done := make(chan int, 1)
		var out, errOut lockedBuffer
		go func() {
			done <- run(context.Background(), slices.Clone(sdkArgs), strings.NewReader(stdin), &out, &errOut)
		}()
		select {
		case code := <-done:
			if code != 0 && code != 1 {
				t.Errorf("exit %d", code)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no exit for stdin %q; stderr %q", stdin, errOut.String())
		}
	})
}

// TestStreamJSONStartupFailure: a session that cannot start (an unknown
// --resume id) gets no initialize answer: the reason on stderr and as an
// error result, exit 1.
func TestStreamJSONStartupFailure(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	s := startSJ(t, srv, "--resume", "11111111-1111-4111-8111-111111111111")
	s.send(initLine("init1", ""))
	if code := s.finish(); code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if k := kinds(t, s.seen); !slices.Equal(k, []string{"result/error_during_execution"}) {
		t.Errorf("lines %q, want one error result", k)
	}
	if !strings.Contains(s.stderr.String(), "11111111-1111-4111-8111-111111111111") || srv.Len() != 0 {
		t.Errorf("stderr %q, %d requests", s.stderr.String(), srv.Len())
	}
}
