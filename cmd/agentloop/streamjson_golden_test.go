package main

// Two-direction golden conversations of the stream-json driver: each
// test drives run() through pipes against the scripted API, and its
// whole conversation (what it wrote on stdin, what it read on stdout, in
// the order of its actions) is compared with
// testdata/streamjson/convo/<name>.jsonl. Run with -update to rewrite.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// convo records a session's conversation. Each line of the record is
// "> " and a line written to stdin, or "< " and a line read from
// stdout. A stdin line is recorded when it is written, after every
// stdout line read so far; stdout lines are recorded as until and
// finish read them. The record follows the test's actions, not the
// timing of the driver, so it is the same from run to run as long as
// the driver's own output order is. Where it is not (a line written
// apart from the turn's messages), the test floats the line and lands
// it at a fixed point.
type convo struct {
	*sjSession
	rec      []string
	recorded int // how many of s.seen were recorded (or held)

	floating [][]string // patterns of the lines to hold (float)
	held     []string   // floating lines read and not yet landed
}

// startConvo starts a recorded session, as startSJ does.
func startConvo(t *testing.T, srv *agentlooptest.Server, args ...string) *convo {
	t.Helper()
	return &convo{sjSession: startSJ(t, srv, args...)}
}

// send writes one or more stdin lines (separated by newlines) and
// records them.
func (c *convo) send(lines string) {
	c.t.Helper()
	c.flush()
	for l := range strings.SplitSeq(lines, "\n") {
		c.rec = append(c.rec, "> "+l)
	}
	c.sjSession.send(lines)
}

// until reads stdout up to a line with every one of subs, records what
// it read and returns that line.
func (c *convo) until(subs ...string) string {
	c.t.Helper()
	l := c.sjSession.until(subs...)
	c.flush()
	return l
}

// float marks the stdout lines containing all of subs as racing the
// lines around them (a replayed user line, an answer written apart from
// the turn's messages): such a line is held, not recorded where it was
// read, until land records it.
func (c *convo) float(subs ...string) {
	c.floating = append(c.floating, subs)
}

// land records the first held line containing all of subs, reading
// stdout until there is one; the lines read meanwhile are recorded
// before it.
func (c *convo) land(subs ...string) string {
	c.t.Helper()
	for {
		c.flush()
		if i := slices.IndexFunc(c.held, func(l string) bool { return containsAll(l, subs) }); i >= 0 {
			l := c.held[i]
			c.held = slices.Delete(c.held, i, i+1)
			c.rec = append(c.rec, "< "+l)
			return l
		}
		c.sjSession.until(subs...)
	}
}

// finish closes stdin, reads stdout to its end, records it and returns
// the exit code. Every floating line must have landed.
func (c *convo) finish() int {
	c.t.Helper()
	code := c.sjSession.finish()
	c.flush()
	if len(c.held) > 0 {
		c.t.Errorf("floating lines never landed: %q", c.held)
	}
	return code
}

// flush records the stdout lines read since the last record, holding
// the floating ones.
func (c *convo) flush() {
	for _, l := range c.seen[c.recorded:] {
		if slices.ContainsFunc(c.floating, func(subs []string) bool { return containsAll(l, subs) }) {
			c.held = append(c.held, l)
		} else {
			c.rec = append(c.rec, "< "+l)
		}
	}
	c.recorded = len(c.seen)
}

// request is the request id and body of an engine→host control
// request line.
func (c *convo) request(line string) (id string, body map[string]any) {
	c.t.Helper()
	var r struct {
		RequestID string         `json:"request_id"`
		Request   map[string]any `json:"request"`
	}
	if err := json.Unmarshal([]byte(line), &r); err != nil || r.RequestID == "" {
		c.t.Fatalf("not a control request (%v): %s", err, line)
	}
	return r.RequestID, r.Request
}

// answer sends the host's success answer to request id.
func (c *convo) answer(id, response string) {
	c.t.Helper()
	c.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + id + `","response":` + response + `}}`)
}

// check compares the record with testdata/streamjson/convo/name.jsonl,
// normalised (convoNormalise).
func (c *convo) check(name string) {
	c.t.Helper()
	got := convoNormalise(c.t, c.rec, c.dir)
	path := filepath.Join(goldenDir, "convo", name+".jsonl")
	if *updateStreamJSON {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			c.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			c.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		c.t.Fatalf("%v (run with -update to write it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		c.t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// convoVolatile are members replaced by a placeholder besides those of
// volatileKeys: token counts of get_context_usage, which follow the
// size of the system prompt and tools, and the MCP client's
// clientInfo, which carries agentloop's version.
var convoVolatile = map[string]bool{
	"tokens": true, "totalTokens": true, "percentage": true, "messageBreakdown": true,
	"clientInfo": true, // the MCP client's: agentloop's version
}

// convoNormalise makes the record comparable from run to run. In every
// line the test directory becomes <dir>, and uuids and message ids
// become <idN>, numbered in order of appearance across both directions,
// so that an answer names the request it answers as the request did.
// Stdout lines are re-encoded with sorted members and volatile members
// replaced by <name>; stdin lines keep the test's text.
func convoNormalise(t *testing.T, rec []string, dir string) string {
	t.Helper()
	names := map[string]string{}
	name := func(s string) string {
		if names[s] == "" {
			names[s] = fmt.Sprintf("<id%d>", len(names)+1)
		}
		return names[s]
	}
	var walk func(key string, v any, out bool) any
	walk = func(key string, v any, out bool) any {
		if out && (volatileKeys[key] || convoVolatile[key]) {
			return "<" + key + ">"
		}
		switch x := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				x[k] = walk(k, x[k], out)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(key, e, out)
			}
		case string:
			if uuidRE.MatchString(x) || msgIDRE.MatchString(x) {
				return name(x)
			}
		}
		return v
	}
	var b strings.Builder
	for _, r := range rec {
		dirn, l := r[:2], r[2:]
		if dir != "" {
			l = strings.ReplaceAll(l, dir, "<dir>")
		}
		var v any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line is not JSON: %q", r)
		}
		if dirn == "> " {
			walk("", v, false) // names the ids in order
			for _, id := range slices.Sorted(maps.Keys(names)) {
				l = strings.ReplaceAll(l, id, names[id])
			}
			b.WriteString(dirn + l + "\n")
			continue
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(walk("", v, true)); err != nil {
			t.Fatal(err)
		}
		b.WriteString(dirn + buf.String())
	}
	return b.String()
}

// writeCall is a scripted Write of content to the file name in dir.
func writeCall(id, dir, name, content string) agentlooptest.Reply {
	return agentlooptest.ToolUse(id, "Write", map[string]any{"file_path": filepath.Join(dir, name), "content": content})
}

// TestConvoCanUseTool: with --permission-prompt-tool stdio each tool call
// is put to the host as can_use_tool (after requires_action), and each
// kind of answer does what it says: allow with updatedInput runs the
// changed call, deny with a message tells the model, deny with interrupt
// ends the turn, allow with updatedPermissions applies them (setMode
// acceptEdits: the next Write is not asked).
func TestConvoCanUseTool(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	c := startConvo(t, srv, "--permission-prompt-tool", "stdio")
	dir := c.dir
	srv.Push(
		writeCall("toolu_1", dir, "asked.txt", "model text\n"), agentlooptest.Text("one"),
		writeCall("toolu_2", dir, "denied.txt", "x\n"), agentlooptest.Text("two"),
		writeCall("toolu_3", dir, "stopped.txt", "x\n"),
		writeCall("toolu_4", dir, "perm.txt", "x\n"), agentlooptest.Text("four"),
		writeCall("toolu_5", dir, "free.txt", "x\n"), agentlooptest.Text("five"))
	ask := func(prompt string) (id, toolUseID string) {
		c.send(userLine(prompt))
		id, body := c.request(c.until(`"subtype":"can_use_tool"`))
		return id, body["tool_use_id"].(string)
	}
	c.send(initLine("init1", ""))

	id, tu := ask("write asked.txt")
	c.answer(id, `{"behavior":"allow","updatedInput":{"file_path":`+quoteJSON(filepath.Join(dir, "changed.txt"))+`,"content":"host text\n"},"toolUseID":"`+tu+`"}`)
	c.until(`"type":"result"`)
	c.until(`"state":"idle"`)

	id, tu = ask("write denied.txt")
	c.answer(id, `{"behavior":"deny","message":"No writes today","interrupt":false,"toolUseID":"`+tu+`"}`)
	c.until(`"state":"idle"`)

	id, tu = ask("write stopped.txt")
	c.answer(id, `{"behavior":"deny","message":"Stop here","interrupt":true,"toolUseID":"`+tu+`"}`)
	c.until(`"state":"idle"`)

	id, tu = ask("write perm.txt")
	c.answer(id, `{"behavior":"allow","updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}],"toolUseID":"`+tu+`"}`)
	c.until(`"state":"idle"`)

	c.send(userLine("write free.txt"))
	if code := c.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, c.stderr.String())
	}
	c.check("can_use_tool")
	for name, want := range map[string]string{"changed.txt": "host text\n", "perm.txt": "x\n", "free.txt": "x\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	for _, name := range []string{"asked.txt", "denied.txt", "stopped.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
	if n := strings.Count(strings.Join(c.seen, "\n"), `"subtype":"can_use_tool"`); n != 4 {
		t.Errorf("%d can_use_tool requests, want 4 (none after setMode acceptEdits)", n)
	}
}

// TestConvoHookCallback: hooks registered in initialize are called on the
// host as hook_callback with their callback ids. A UserPromptSubmit
// answer adds context, a PreToolUse answer allows the call and rewrites
// its input; an error answer counts as an empty one and is reported.
func TestConvoHookCallback(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	c := startConvo(t, srv)
	srv.Push(writeCall("toolu_1", c.dir, "model.txt", "model text\n"), agentlooptest.Text("hooked"), agentlooptest.Text("plain"))
	c.send(initLine("init1", `"hooks":{"PreToolUse":[{"matcher":"Write","hookCallbackIds":["hook_0"],"timeout":30}],"UserPromptSubmit":[{"hookCallbackIds":["hook_1"]}]}`))
	c.until(`"request_id":"init1"`)

	c.send(userLine("write model.txt"))
	id, body := c.request(c.until(`"subtype":"hook_callback"`))
	if body["callback_id"] != "hook_1" {
		t.Fatalf("first callback %v, want hook_1 (UserPromptSubmit)", body["callback_id"])
	}
	c.answer(id, `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"CONTEXT-FROM-HOST"}}`)
	id, body = c.request(c.until(`"subtype":"hook_callback"`))
	if body["callback_id"] != "hook_0" {
		t.Fatalf("second callback %v, want hook_0 (PreToolUse)", body["callback_id"])
	}
	c.answer(id, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"hook says ok","updatedInput":{"file_path":`+quoteJSON(filepath.Join(c.dir, "hooked.txt"))+`,"content":"content from hook\n"}}}`)
	c.until(`"state":"idle"`)

	c.send(userLine("no context"))
	id, _ = c.request(c.until(`"subtype":"hook_callback"`))
	c.send(`{"type":"control_response","response":{"subtype":"error","request_id":"` + id + `","error":"hook exploded"}}`)
	// Stdin stays open until the turn is over: an answer followed at once
	// by the end of stdin may be lost to it (hostLink.Call's select).
	c.until(`"state":"idle"`)
	if code := c.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, c.stderr.String())
	}
	c.check("hook_callback")
	if b, err := os.ReadFile(filepath.Join(c.dir, "hooked.txt")); err != nil || string(b) != "content from hook\n" {
		t.Errorf("hooked.txt = %q, %v; want the hook's content", b, err)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "model.txt")); err == nil {
		t.Error("the model's path was written despite the hook's updatedInput")
	}
	body0, _ := json.Marshal(srv.Requests()[0].Field("messages"))
	if !strings.Contains(string(body0), "CONTEXT-FROM-HOST") {
		t.Errorf("the hook's additional context was not sent: %s", body0)
	}
}

// calcInit and calcTools are the answers of the host's in-process MCP
// server "calc" to initialize and tools/list.
const (
	calcInit  = `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"calc","version":"1.0.0"}}`
	calcTools = `{"tools":[{"name":"add","description":"Add two numbers","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}]}`
)

// serveMCP acts as the host of the in-process server calc: it answers
// every mcp_message request read until a line with all of stop, which it
// returns.
func (c *convo) serveMCP(stop ...string) string {
	c.t.Helper()
	for {
		l := c.until(`"type":`)
		if containsAll(l, stop) {
			return l
		}
		if !strings.Contains(l, `"subtype":"mcp_message"`) || !strings.Contains(l, `"type":"control_request"`) {
			continue
		}
		id, body := c.request(l)
		msg, _ := body["message"].(map[string]any)
		rpcID := "0"
		if v, ok := msg["id"]; ok {
			b, _ := json.Marshal(v)
			rpcID = string(b)
		}
		result := `{}`
		switch msg["method"] {
		case "initialize":
			result = calcInit
		case "tools/list":
			result = calcTools
		case "tools/call":
			result = `{"content":[{"type":"text","text":"sum=5"}]}`
		}
		c.answer(id, `{"mcp_response":{"jsonrpc":"2.0","id":`+rpcID+`,"result":`+result+`}}`)
	}
}

// TestConvoMCPMessage: an in-process MCP server of the host, declared in
// initialize without a manifest, is initialised, listed and called over
// mcp_message, the test answering as the host; a message the host's
// server starts (a ping) is answered by the engine's client.
func TestConvoMCPMessage(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "mcp__calc__add", map[string]any{"a": 2, "b": 3}),
		agentlooptest.Text("five"))
	c := startConvo(t, srv, "--allowedTools", "mcp__calc__add")
	c.send(initLine("init1", `"sdkMcpServers":["calc"]`))
	c.serveMCP(`"request_id":"init1"`)
	c.send(userLine("add 2 and 3"))
	c.serveMCP(`"state":"idle"`)
	c.send(`{"request_id":"hm1","type":"control_request","request":{"subtype":"mcp_message","server_name":"calc","message":{"jsonrpc":"2.0","id":9,"method":"ping"}}}`)
	c.serveMCP(`"request_id":"hm1"`)
	c.send(`{"request_id":"hm2","type":"control_request","request":{"subtype":"mcp_message","server_name":"nosuch","message":{"jsonrpc":"2.0","id":10,"method":"ping"}}}`)
	c.serveMCP(`"request_id":"hm2"`)
	if code := c.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, c.stderr.String())
	}
	c.check("mcp_message")
	if len(srv.Requests()) < 2 {
		t.Fatalf("%d requests", len(srv.Requests()))
	}
	res, ok := srv.Requests()[1].ToolResult("toolu_1")
	if b, _ := json.Marshal(res); !ok || !strings.Contains(string(b), "sum=5") {
		t.Errorf("tool result %s, want sum=5", b)
	}
}

// TestConvoInitialize: initialize delivering every field agentloop
// honours (system prompt, hooks, an in-process MCP server with its
// manifest, agents, jsonSchema, settings, disallowedTools, mcpServers,
// plugins) and one it does not (managedSettings): the answer's *_applied
// members say which were applied, and the turn uses them.
func TestConvoInitialize(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "StructuredOutput", map[string]any{"answer": "forty-two"}))
	c := startConvo(t, srv, "--await-initialize", "--initialize-fields=settings,disallowedTools,mcpServers")
	c.send(userLine("held until initialize"))
	c.send(initLine("init1", `"appendSystemPrompt":"APPENDED",`+
		`"hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"]}]},`+
		`"sdkMcpServers":["calc"],"sdkMcpServerManifests":{"calc":{"initializeResult":`+calcInit+`,"toolsListResult":`+calcTools+`}},`+
		`"agents":{"reviewer":{"description":"Reviews code","prompt":"You review code.","tools":["Read"],"model":"haiku"}},`+
		`"jsonSchema":{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]},`+
		`"settings":{"permissions":{"deny":["WebFetch"]}},"disallowedTools":["WebSearch"],"mcpServers":{},`+
		`"managedSettings":{},"plugins":[]`))
	ans := c.until(`"request_id":"init1"`)
	c.until(`"state":"idle"`)
	if code := c.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, c.stderr.String())
	}
	c.check("initialize")
	for _, want := range []string{`"hooks_applied":true`, `"settings_applied":true`, `"disallowed_tools_applied":true`,
		`"mcp_servers_applied":true`, `"managed_settings_applied":false`, `"plugins_applied":true`} {
		if !strings.Contains(ans, want) {
			t.Errorf("initialize answer %s, want %s", ans, want)
		}
	}
	req := srv.Requests()[0]
	if got := req.SystemText(); !strings.Contains(got, "APPENDED") {
		t.Errorf("appendSystemPrompt not in the system prompt: %q", got)
	}
	tools := req.ToolNames()
	if !slices.Contains(tools, "StructuredOutput") {
		t.Errorf("tools sent %q, want StructuredOutput for jsonSchema", tools)
	}
	if !slices.ContainsFunc(c.seen, func(l string) bool {
		return containsAll(l, []string{`"subtype":"init"`, `"name":"calc"`, `"status":"connected"`})
	}) {
		t.Error("the in-process server of initialize is not connected")
	}
	if slices.Contains(tools, "WebSearch") {
		t.Errorf("tools sent %q include WebSearch, disallowed in initialize", tools)
	}
	if !strings.Contains(strings.Join(c.seen, "\n"), `"structured_output":{"answer":"forty-two"}`) {
		t.Error("no structured output in the result")
	}
	if b, _ := json.Marshal(req.Field("tools")); !strings.Contains(string(b), "reviewer") {
		t.Error("the agent of initialize is not offered to the model")
	}
}

// TestConvoSetters: set_permission_mode, set_model and
// set_max_thinking_tokens are answered and change the next turn; a bad
// mode is refused; set_model without a model and max_thinking_tokens
// null reset them.
func TestConvoSetters(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"))
	c := startConvo(t, srv)
	c.send(initLine("init1", ""))
	c.until(`"request_id":"init1"`)
	for i, req := range []string{
		`"subtype":"set_permission_mode","mode":"acceptEdits"`,
		`"subtype":"set_permission_mode","mode":"yolo"`,
		`"subtype":"set_model","model":"claude-opus-4-1"`,
		`"subtype":"set_max_thinking_tokens","max_thinking_tokens":2048`,
	} {
		id := fmt.Sprintf("s%d", i+1)
		c.send(`{"request_id":"` + id + `","type":"control_request","request":{` + req + `}}`)
		c.until(`"request_id":"` + id + `"`)
	}
	c.send(userLine("first"))
	c.until(`"state":"idle"`)
	for i, req := range []string{
		`"subtype":"set_model"`,
		`"subtype":"set_max_thinking_tokens","max_thinking_tokens":null`,
		`"subtype":"set_permission_mode","mode":"default"`,
	} {
		id := fmt.Sprintf("r%d", i+1)
		c.send(`{"request_id":"` + id + `","type":"control_request","request":{` + req + `}}`)
		c.until(`"request_id":"` + id + `"`)
	}
	c.send(userLine("second"))
	if code := c.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, c.stderr.String())
	}
	c.check("setters")
	reqs := srv.Requests()
	var m1, m2 string
	_ = json.Unmarshal(reqs[0].Field("model"), &m1)
	_ = json.Unmarshal(reqs[1].Field("model"), &m2)
	if m1 != "claude-opus-4-1" || m2 == "claude-opus-4-1" {
		t.Errorf("models sent %q then %q, want claude-opus-4-1 then the default", m1, m2)
	}
	if th := string(reqs[0].Field("thinking")); !strings.Contains(th, "2048") {
		t.Errorf("first thinking sent %s, want a budget of 2048", th)
	}
	if th := string(reqs[1].Field("thinking")); strings.Contains(th, "2048") {
		t.Errorf("second thinking sent %s, want none after null", th)
	}
}

// TestConvoStatusAndUsage: mcp_status lists the servers with their
// state, get_context_usage measures the context between turns (its
// token counts are left out of the golden file).
func TestConvoStatusAndUsage(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("one"))
	c := startConvo(t, srv)
	c.send(initLine("init1", `"sdkMcpServers":["calc"],"sdkMcpServerManifests":{"calc":{"initializeResult":`+calcInit+`,"toolsListResult":`+calcTools+`}}`))
	c.until(`"request_id":"init1"`)
	c.send(`{"request_id":"q1","type":"control_request","request":{"subtype":"mcp_status"}}`)
	c.until(`"request_id":"q1"`)
	c.send(`{"request_id":"q2","type":"control_request","request":{"subtype":"get_context_usage"}}`)
	before := c.until(`"request_id":"q2"`)
	c.send(userLine("hello"))
	c.until(`"state":"idle"`)
	c.send(`{"request_id":"q3","type":"control_request","request":{"subtype":"get_context_usage"}}`)
	after := c.until(`"request_id":"q3"`)
	if code := c.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, c.stderr.String())
	}
	c.check("status_usage")
	total := func(l string) float64 {
		var a struct {
			Response struct {
				Response struct {
					TotalTokens float64 `json:"totalTokens"`
				} `json:"response"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatal(err)
		}
		return a.Response.Response.TotalTokens
	}
	if b, a := total(before), total(after); b <= 0 || a <= 0 {
		t.Errorf("totalTokens %v before the turn and %v after, want positive counts", b, a)
	}
}
