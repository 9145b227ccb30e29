package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// A prompt larger than the --autocompact window is compacted before the
// first request: the summary request goes first, the stream shows the
// boundary, and the conversation's request carries the summary.
func TestAutocompactFlag(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("SUMMARY: a long question."), agentlooptest.Text("Answered."))
	prompt := "Please read this: " + strings.Repeat("words and more words ", 2000) // ~10k tokens
	code, out, errOut := runCLI(t, srv, prompt, "-p", "--output-format", "stream-json", "--verbose", "--autocompact", "8000")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var boundary map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if m["subtype"] == "compact_boundary" {
			boundary = m
		}
	}
	md, _ := boundary["compact_metadata"].(map[string]any)
	if md["trigger"] != "auto" {
		t.Fatalf("no auto compact_boundary in the stream: %v", boundary)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(reqs[0].Params.Tools) != 0 || !strings.Contains(reqs[1].LastUserText(), "SUMMARY: a long question.") {
		t.Errorf("requests: %d; the second does not carry the summary", len(reqs))
	}
	if strings.Contains(reqs[1].LastUserText(), "words and more words words") {
		t.Error("the compacted prompt was sent again")
	}
}

func TestAutocompactFlagValues(t *testing.T) {
	for _, v := range []string{"0", "-5", "lots", ""} {
		code, _, errOut := runCLI(t, nil, "", "-p", "hi", "--autocompact", v)
		if code == 0 || !strings.Contains(errOut, "--autocompact") {
			t.Errorf("--autocompact %q: exit %d, stderr %q", v, code, errOut)
		}
	}
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Fine."))
	if code, out, errOut := runCLI(t, srv, "", "-p", "hi", "--autocompact", "auto"); code != 0 || out != "Fine.\n" {
		t.Errorf("--autocompact auto: exit %d, %q %q", code, out, errOut)
	}
}

// /compact is an ordinary prompt for the CLI: on a resumed session it
// compacts, with the summary request first, and ends, as the reference's
// does, with an empty result and no turns.
func TestCompactCommandCLI(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("First answer."), agentlooptest.Text("SUMMARY: one exchange."))
	code, out, errOut := runCLI(t, srv, "", "-p", "hello", "--output-format", "json")
	var first struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(out), &first); err != nil || code != 0 {
		t.Fatalf("exit %d, %q %q: %v", code, out, errOut, err)
	}
	code, out, errOut = runCLI(t, srv, "", "-p", "/compact keep the greeting", "--resume", first.SessionID, "--output-format", "json")
	var res struct {
		Result   string `json:"result"`
		NumTurns int    `json:"num_turns"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 {
		t.Fatalf("exit %d, %q %q: %v", code, out, errOut, err)
	}
	reqs := srv.Requests()
	if res.Result != "" || res.NumTurns != 0 || len(reqs) != 2 || len(reqs[1].Params.Tools) != 0 {
		t.Errorf("result %+v after %d requests", res, len(reqs))
	}
	last := reqs[1].Params.Messages[len(reqs[1].Params.Messages)-1]
	if text := last.Content[len(last.Content)-1].Text; !strings.Contains(text, "keep the greeting") {
		t.Errorf("summary instruction lacks the custom instructions: %.200s", text)
	}
}
