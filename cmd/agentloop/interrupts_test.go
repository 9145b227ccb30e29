package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

// The reference's replies in testdata/interrupts (see its README): the
// scripted texts, the same here so that the shapes compare.
const (
	countingText = "Counting slowly: one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty twenty-one twenty-two twenty-three twenty-four."
	secondText   = "Second answer."
)

// TestStreamJSONInterruptsLikeReference interrupts a stream-json session
// on each path the reference was recorded on (testdata/interrupts/<path>)
// and compares with the recording what follows the interrupt on stdout
// (the answer first, the partial reply, the stopped calls, a stopped
// subagent's task lines, the marker, the result) and the request of the next prompt (the partial reply sent back,
// the marker then the new prompt in one user turn, the interrupted prompt
// not asked again).
func TestStreamJSONInterruptsLikeReference(t *testing.T) {
	recorded, err := filepath.Abs(filepath.Join("testdata", "interrupts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"text", "tool", "perm", "parallel", "subagent"} {
		t.Run(path, func(t *testing.T) {
			srv := agentlooptest.NewTB(t)
			var args []string
			prompt := "PROMPT ONE run sleep"
			switch path {
			case "text":
				r := agentlooptest.Text(countingText)
				r.Chunk, r.EventDelay = 10, 100*time.Millisecond
				srv.Push(r)
				args = []string{"--include-partial-messages"}
				prompt = "PROMPT ONE count"
			case "tool":
				srv.Push(agentlooptest.Blocks(model.TextBlock("Running it."),
					agentlooptest.ToolUseBlock("toolu_sleep1", "Bash", map[string]any{"command": "touch started; sleep 30; echo done", "description": "sleep then echo"})))
				args = []string{"--allowedTools", "Bash"}
			case "subagent":
				// A foreground subagent whose Bash call runs at the
				// interrupt.
				srv.Push(agentlooptest.Blocks(model.TextBlock("Delegating."),
					agentlooptest.ToolUseBlock("toolu_agent1", "Agent", map[string]any{"description": "Sleep helper",
						"prompt": "Run the sleep command.", "subagent_type": "sleeper", "run_in_background": false})))
				srv.Push(agentlooptest.Blocks(model.TextBlock("Sleeping now."),
					agentlooptest.ToolUseBlock("toolu_sleep1", "Bash", map[string]any{"command": "touch started; sleep 30; echo done", "description": "sleep then echo"})))
				args = []string{"--allowedTools", "Bash", "--agents", `{"sleeper":{"description":"Runs sleeps","prompt":"You run commands.","tools":["Bash"]}}`}
				prompt = "PROMPT ONE delegate"
			case "perm":
				srv.Push(agentlooptest.Blocks(model.TextBlock("Writing it."),
					agentlooptest.ToolUseBlock("toolu_write1", "Write", map[string]any{"file_path": "out.txt", "content": "hello\n"})))
				args = []string{"--permission-prompt-tool", "stdio"}
			}
			s := startSJ(t, srv, args...)
			if path == "parallel" {
				// A Read that finishes and two Bash calls that only read
				// (so they run together), still running at the interrupt.
				notes := filepath.Join(s.dir, "notes.txt")
				if err := os.WriteFile(notes, []byte("hello file\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				srv.Push(agentlooptest.Blocks(model.TextBlock("Looking."),
					agentlooptest.ToolUseBlock("toolu_read1", "Read", map[string]any{"file_path": notes}),
					agentlooptest.ToolUseBlock("toolu_sleepA", "Bash", map[string]any{"command": "sleep 30; echo one", "description": "sleep one"}),
					agentlooptest.ToolUseBlock("toolu_sleepB", "Bash", map[string]any{"command": "sleep 30; echo two", "description": "sleep two"})))
				prompt = "PROMPT ONE look"
			}
			srv.Push(agentlooptest.Text(secondText))
			s.send(initLine("init1", ""))
			s.until(`"request_id":"init1"`)
			s.send(userLine(prompt))
			var permID string
			switch path {
			case "text":
				s.until(`"text_delta"`)
			case "tool":
				s.until(`"tool_use"`)
				waitForFile(t, filepath.Join(s.dir, "started"))
			case "subagent":
				s.until(`"id":"toolu_sleep1"`)
				waitForFile(t, filepath.Join(s.dir, "started"))
			case "parallel":
				s.until(`"tool_use_id":"toolu_read1"`)
			case "perm":
				var req struct {
					RequestID string `json:"request_id"`
				}
				_ = json.Unmarshal([]byte(s.until(`"can_use_tool"`)), &req)
				permID = req.RequestID
			}
			from := len(s.seen)
			s.send(`{"request_id":"int1","type":"control_request","request":{"subtype":"interrupt"}}`)
			s.until(`"type":"result"`)
			got := interruptShape(t, s.seen[from:])
			if permID != "" {
				// A late answer is ignored.
				s.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + permID + `","response":{"behavior":"allow","updatedInput":{"file_path":"late.txt","content":"x"}}}}`)
			}
			s.send(userLine("PROMPT TWO after"))
			s.until(`"type":"result"`, secondText)
			if code := s.finish(); code != 0 {
				t.Errorf("exit %d, want 0; stderr %q", code, s.stderr.String())
			}
			ref := readJSONL(t, filepath.Join(recorded, path, "stdout.jsonl"))
			for i, l := range ref {
				if strings.Contains(l, `"request_id": "int1"`) {
					ref = ref[i:]
					break
				}
			}
			if diff := cmp.Diff(interruptShape(t, ref), got); diff != "" {
				t.Errorf("what follows the interrupt (-reference +agentloop):\n%s", diff)
			}
			if diff := cmp.Diff(closingShape(t, ref), closingShape(t, s.seen[from:])); diff != "" {
				t.Errorf("the stream events that close the cut reply (-reference +agentloop):\n%s", diff)
			}
			reqs := readJSONL(t, filepath.Join(recorded, path, "requests.jsonl"))
			var refNext model.Request
			if err := json.Unmarshal([]byte(reqs[len(reqs)-1]), &refNext); err != nil {
				t.Fatal(err)
			}
			next := srv.LastRequest().Params.Messages
			if diff := cmp.Diff(historyShape(refNext.Messages), historyShape(next)); diff != "" {
				t.Errorf("the next request (-reference +agentloop):\n%s", diff)
			}
			if err := agentlooptest.ValidateHistory(next); err != nil {
				t.Errorf("the next request is invalid: %v", err)
			}
			if path == "perm" {
				if _, err := os.Stat(filepath.Join(s.dir, "late.txt")); err == nil {
					t.Error("the late permission answer ran the call")
				}
			}
		})
	}
}

// waitForFile waits until path exists (the tool started).
func waitForFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readJSONL(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// interruptShape describes the lines from the interrupt's answer to the
// first result: kinds, texts (a partial reply as such), tool results by
// what they say (stopped while running, or rejected before), a subagent's
// task_updated and task_notification with their statuses, markers.
// Stream events, other system lines and the cancel of a pending host
// request are left out.
func interruptShape(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		var m struct {
			Type     string  `json:"type"`
			Subtype  string  `json:"subtype"`
			Terminal string  `json:"terminal_reason"`
			Stop     *string `json:"stop_reason"`
			Aborted  bool    `json:"aborted"`
			Response struct {
				RequestID string          `json:"request_id"`
				Response  json.RawMessage `json:"response"`
			} `json:"response"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		switch m.Type {
		case "control_response":
			if m.Response.RequestID == "int1" {
				var a struct {
					StillQueued []string `json:"still_queued"`
				}
				_ = json.Unmarshal(m.Response.Response, &a)
				out = append(out, "answer still_queued="+strings.Join(a.StillQueued, ","))
			}
		case "assistant", "user":
			var blocks []model.Content
			_ = json.Unmarshal(m.Message.Content, &blocks)
			for _, b := range blocks {
				k := m.Type + " " + blockShape(b)
				if m.Aborted {
					k += " (aborted)"
				}
				out = append(out, k)
			}
		case "system":
			var task struct {
				Status string `json:"status"`
				Patch  struct {
					Status string `json:"status"`
				} `json:"patch"`
				Summary string `json:"summary"`
			}
			_ = json.Unmarshal([]byte(l), &task)
			switch m.Subtype {
			case "task_updated":
				out = append(out, "task_updated "+task.Patch.Status)
			case "task_notification":
				out = append(out, "task_notification "+task.Status+" "+task.Summary)
			}
		case "result":
			stop := "null"
			if m.Stop != nil {
				stop = *m.Stop
			}
			out = append(out, "result "+m.Subtype+" "+m.Terminal+" stop_reason="+stop)
			return out
		}
	}
	return out
}

// blockShape names a block as the comparison sees it.
func blockShape(b model.Content) string {
	switch b.Type {
	case model.TypeToolUse:
		return "tool_use " + b.Name
	case model.TypeToolResult:
		text := b.ResultText()
		switch {
		case text == engine.StoppedText || strings.Contains(text, "stopped while running"):
			return "tool_result stopped"
		case text == engine.RejectedText || strings.Contains(text, "rejected before it ran"):
			return "tool_result rejected"
		}
		return "tool_result " + text
	case model.TypeText:
		if b.Text != countingText && strings.HasPrefix(countingText, b.Text) {
			return "text <part of the reply>"
		}
		return "text " + b.Text
	}
	return b.Type
}

// historyShape describes a request's messages, leaving out each side's
// context blocks (system reminders; elided in the recording).
func historyShape(msgs []model.Message) []string {
	var out []string
	for _, m := range msgs {
		var parts []string
		for _, b := range m.Content {
			if b.Type == model.TypeText && (strings.HasPrefix(b.Text, "<system-reminder>") || strings.HasPrefix(b.Text, "<elided")) {
				continue
			}
			parts = append(parts, blockShape(b))
		}
		if len(parts) > 0 {
			out = append(out, m.Role+": "+strings.Join(parts, " | "))
		}
	}
	return out
}

// closingShape describes, from the lines up to the first result, the
// stream events written after the interrupt's marker: each event's type
// and index, the fields a message_delta carries (its delta exactly, its
// usage's field names) and the first abandoned block a message_stop
// names.
func closingShape(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	marked := false
	for _, l := range lines {
		var m struct {
			Type    string `json:"type"`
			Message struct {
				Content []model.Content `json:"content"`
			} `json:"message"`
			Event     map[string]json.RawMessage `json:"event"`
			Abandoned *struct {
				From int `json:"from_block_index"`
			} `json:"abandoned_blocks"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		switch {
		case m.Type == "result":
			return out
		case m.Type == "user" && len(m.Message.Content) == 1 && m.Message.Content[0].Text == engine.InterruptedMarker:
			marked = true
			out = append(out, "marker")
		case m.Type == "stream_event" && marked:
			var typ string
			_ = json.Unmarshal(m.Event["type"], &typ)
			k := typ
			if i, ok := m.Event["index"]; ok {
				k += " " + string(i)
			}
			switch typ {
			case "message_delta":
				var keys, usage []string
				for f := range m.Event {
					keys = append(keys, f)
				}
				var u map[string]json.RawMessage
				_ = json.Unmarshal(m.Event["usage"], &u)
				for f := range u {
					usage = append(usage, f)
				}
				sort.Strings(keys)
				sort.Strings(usage)
				var delta any
				_ = json.Unmarshal(m.Event["delta"], &delta)
				d, _ := json.Marshal(delta) // sorted keys
				k += " " + strings.Join(keys, ",") + " delta=" + string(d) + " usage=" + strings.Join(usage, ",")
			case "message_stop":
				if m.Abandoned != nil {
					k += fmt.Sprintf(" abandoned from %d", m.Abandoned.From)
				}
			}
			out = append(out, k)
		}
	}
	return out
}
