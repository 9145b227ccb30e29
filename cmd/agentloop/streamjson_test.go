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
	return startSJContext(t, context.Background(), srv, args...)
}

// startSJContext is startSJ with the command run under ctx (one carrying
// signal hooks, say).
func startSJContext(t *testing.T, ctx context.Context, srv *agentlooptest.Server, args ...string) *sjSession {
	t.Helper()
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	dir := t.TempDir()
	t.Chdir(dir)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &sjSession{t: t, in: inW, lines: make(chan string, 1024), code: make(chan int, 1), stderr: &lockedBuffer{}, dir: dir}
	go func() {
		code := run(ctx, append(slices.Clone(sdkArgs), args...), inR, outW, s.stderr)
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

// Three prompts: the first runs at once; the two sent while it runs are
// queued and then run as one turn, texts joined by a newline, as the
// reference runs prompts queued during a turn. Each is echoed with its
// uuid.
func TestStreamJSONThreeQueued(t *testing.T) {
	arrived, release := make(chan struct{}), make(chan struct{})
	one := agentlooptest.Text("one")
	one.Expect = func(*agentlooptest.Request) error {
		close(arrived)
		<-release
		return nil
	}
	srv := agentlooptest.NewTB(t, one, agentlooptest.Text("two"))
	s := startSJ(t, srv, "--replay-user-messages")
	s.send(initLine("init1", `"appendSystemPrompt":"APPENDED"`))
	user := func(i int, p string) {
		s.send(`{"type":"user","message":{"role":"user","content":"` + p + `"},"parent_tool_use_id":null,"session_id":"","uuid":"00000000-0000-4000-8000-00000000000` + fmt.Sprint(i) + `"}`)
	}
	user(1, "first")
	awaitArrival(t, arrived)
	user(2, "second")
	user(3, "third")
	// stdin is handled in order: once this is answered, both are queued.
	s.send(`{"request_id":"q1","type":"control_request","request":{"subtype":"get_frobnicator"}}`)
	s.until(`"request_id":"q1"`)
	close(release)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	// Replayed lines are written as the turns take the messages; they are
	// checked apart from the turns' lines.
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
	if n := srv.Len(); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	if got := srv.Requests()[1].LastUserText(); got != "second\nthird" {
		t.Errorf("second request's prompt %q, want the two queued prompts joined", got)
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
	// still_queued lists the uuids the host gave; a message sent without
	// one is not listed (the reference answers [] for it), and runs all
	// the same.
	s.send(`{"type":"user","session_id":"","uuid":"00000000-0000-4000-8000-0000000000a1","message":{"role":"user","content":"queued one"},"parent_tool_use_id":null}`)
	s.send(userLine("queued two"))
	time.Sleep(50 * time.Millisecond) // let the queued lines be read before the interrupt
	s.send(`{"request_id":"int1","type":"control_request","request":{"subtype":"interrupt"}}`)
	ans := s.until(`"request_id":"int1"`)
	if !strings.Contains(ans, `"still_queued":["00000000-0000-4000-8000-0000000000a1"]`) {
		t.Errorf("interrupt answer %s, want only the host's uuid in still_queued", ans)
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
	if iRes < 0 || iAns > iRes {
		t.Errorf("want the interrupt's answer before the interrupted turn's result, as the reference: %q", k)
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

// TestNoStateLinesUnasked: without CLAUDE_CODE_SDK_READS_SESSION_STATE or
// CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS the stream has no
// session_state_changed line, as the reference's recordings made without
// them have none; with either, the turn is framed by running and idle.
func TestNoStateLinesUnasked(t *testing.T) {
	for _, tc := range []struct {
		name      string
		reads     string
		emit      string
		wantState bool
	}{
		{"neither", "", "", false},
		{"false", "0", "false", false},
		{"sdk reads", "1", "", true},
		{"emit events", "", "TRUE", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(envReadsSessionState, tc.reads)
			t.Setenv(envEmitSessionState, tc.emit)
			srv := agentlooptest.NewTB(t, agentlooptest.Text("Hello there."))
			s := startSJ(t, srv)
			s.send(initLine("init1", ""))
			s.send(userLine("Say hello"))
			if code := s.finish(); code != 0 {
				t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
			}
			want := []string{"control_response/success", "system/init", "assistant", "result/success"}
			if tc.wantState {
				want = []string{"control_response/success", "system/session_state_changed/running", "system/init", "assistant", "result/success", "system/session_state_changed/idle"}
			}
			if diff := cmp.Diff(want, kinds(t, s.seen)); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}
