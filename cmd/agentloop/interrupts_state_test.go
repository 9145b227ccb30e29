package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// TestStreamJSONSessionStateAroundInterruptLikeReference runs the
// session an ACP adapter runs (its arguments, from the recording's
// run.json): a prompt, an interrupt (while the reply streams, or while a
// can_use_tool request is pending), then a second prompt; and compares
// with testdata/interrupts/{state,stateperm} the order of the lines a host
// steers by: session_state_changed, the interrupt's answer, permission
// requests and their withdrawal, the prompts' replays and the results.
// The reference writes idle after the interrupted turn's result, before
// the next prompt's running; a host that ends a prompt on idle must read
// it in the cancelled prompt.
func TestStreamJSONSessionStateAroundInterruptLikeReference(t *testing.T) {
	recorded, err := filepath.Abs(filepath.Join("testdata", "interrupts"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"state", "stateperm"} {
		t.Run(path, func(t *testing.T) {
			var run struct {
				Args []string          `json:"args"`
				Env  map[string]string `json:"env"`
			}
			if err := json.Unmarshal([]byte(readJSONL(t, filepath.Join(recorded, path, "run.json"))[0]), &run); err != nil {
				t.Fatal(err)
			}
			for k, v := range run.Env {
				t.Setenv(k, v)
			}
			srv := agentlooptest.NewTB(t)
			second := secondText
			if path == "state" {
				r := agentlooptest.Text(countingText)
				r.Chunk, r.EventDelay = 10, 100*time.Millisecond
				srv.Push(r)
			} else {
				srv.Push(agentlooptest.Blocks(agentlooptest.ToolUseBlock("toolu_c1", "Bash", map[string]any{"command": "mkdir made-here"})))
				second = "After the cancel."
			}
			srv.Push(agentlooptest.Text(second))
			s := startSJ(t, srv, adapterArgs(run.Args)...)
			s.send(initLine("init1", ""))
			s.until(`"request_id":"init1"`)
			s.send(userLine("PROMPT ONE"))
			if path == "state" {
				s.until(`"text_delta"`)
			} else {
				s.until(`"can_use_tool"`)
			}
			s.send(`{"request_id":"int1","type":"control_request","request":{"subtype":"interrupt"}}`)
			s.until(`"type":"result"`)
			s.until(`"state":"idle"`)
			s.send(userLine("PROMPT TWO after"))
			s.until(`"type":"result"`, second)
			if code := s.finish(); code != 0 {
				t.Errorf("exit %d, want 0; stderr %q", code, s.stderr.String())
			}
			ref := stateShape(t, readJSONL(t, filepath.Join(recorded, path, "stdout.jsonl")))
			if diff := cmp.Diff(ref, stateShape(t, s.seen)); diff != "" {
				t.Errorf("states, answers and results (-reference +agentloop):\n%s", diff)
			}
		})
	}
}

// adapterArgs are the recording's arguments without the stream-json ones
// startSJ passes and without --session-id (each run is a new session).
func adapterArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--input-format", "--output-format", "--session-id":
			i++
		case "--verbose":
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// stateShape keeps, in order, the lines a host steers a turn by: state
// changes, the interrupt's answer, control requests (by subtype) and
// their withdrawal, replayed prompts and results (subtype and terminal
// reason). The initialize answer, stream events, messages and status
// lines are left out.
func stateShape(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		var m struct {
			Type     string `json:"type"`
			Subtype  string `json:"subtype"`
			State    string `json:"state"`
			Terminal string `json:"terminal_reason"`
			IsReplay bool   `json:"isReplay"`
			Request  struct {
				Subtype string `json:"subtype"`
			} `json:"request"`
			Response struct {
				RequestID string `json:"request_id"`
			} `json:"response"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		switch {
		case m.Subtype == "session_state_changed":
			out = append(out, "state "+m.State)
		case m.Type == "control_response" && m.Response.RequestID == "int1":
			out = append(out, "interrupt answered")
		case m.Type == "control_request":
			out = append(out, "request "+m.Request.Subtype)
		case m.Type == "control_cancel_request":
			out = append(out, "request withdrawn")
		case m.Type == "user" && m.IsReplay:
			out = append(out, "prompt replayed")
		case m.Type == "result":
			out = append(out, strings.TrimSpace("result "+m.Subtype+" "+m.Terminal))
		}
	}
	return out
}
