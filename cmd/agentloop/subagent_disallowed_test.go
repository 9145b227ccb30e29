package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// TestDisallowedToolsFlagBindsSubagents: --disallowedTools Bash removes Bash
// from subagents too, even one whose definition lists it, in
// bypassPermissions mode: the subagent's Bash call does not run.
func TestDisallowedToolsFlagBindsSubagents(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Shell", "prompt": "Make the marker.", "subagent_type": "shell"}),
		agentlooptest.ToolUse("toolu_b", "Bash", map[string]any{"command": "touch marker"}),
		agentlooptest.Text("shell done"),
		agentlooptest.Text("main done"))
	code, out, errOut := runCLI(t, srv, "", "-p", "go", "--tools", "Agent,Bash,Read", "--disallowedTools", "Bash",
		"--permission-mode", "bypassPermissions", "--no-session-persistence",
		"--agents", `{"shell":{"description":"Runs commands","prompt":"You run commands.","tools":["Bash","Read"]}}`)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	wd, _ := os.Getwd()
	if _, err := os.Stat(filepath.Join(wd, "marker")); err == nil {
		t.Fatal("the subagent ran the disallowed Bash tool")
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if got := reqs[1].ToolNames(); !cmp.Equal(got, []string{"Read"}) {
		t.Errorf("subagent tools = %v, want [Read]", got)
	}
	if tr, _ := reqs[2].ToolResult("toolu_b"); tr.IsError == nil || !*tr.IsError || !strings.Contains(tr.ResultText(), "No such tool") {
		t.Errorf("Bash result = %q", tr.ResultText())
	}
}
