package main

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/google/go-cmp/cmp"
)

// referenceLines reads testdata/localcommands/reference.jsonl.
func referenceLines(t *testing.T) []map[string]any {
	t.Helper()
	f, err := os.Open("testdata/localcommands/reference.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// objKeys are the sorted keys of a JSON object.
func objKeys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestLocalCommandShapes runs local commands in a stream-json session and
// holds their lines to the reference's recording: the synthetic assistant
// line has the reference's local-command fields and no key the
// reference's lacks, and the result names the command as the reference
// does (num_turns 0, stop_reason null). As the reference's, the prompt is
// not echoed under --replay-user-messages.
func TestLocalCommandShapes(t *testing.T) {
	ref := referenceLines(t)
	refAssistant, refResult := map[string]bool{}, map[string]bool{}
	refName := map[string]string{} // local_command_run.command → result local_command
	var lastCmd string
	for _, m := range ref {
		switch {
		case m["type"] == "assistant" && m["local_command_run"] != nil:
			for _, k := range objKeys(m) {
				refAssistant[k] = true
			}
			lastCmd = m["local_command_run"].(map[string]any)["command"].(string)
		case m["type"] == "result" && m["local_command"] != nil:
			for _, k := range objKeys(m) {
				refResult[k] = true
			}
			refName[lastCmd] = m["local_command"].(string)
		}
	}
	srv := agentlooptest.NewTB(t, agentlooptest.Text("one"))
	s := startSJ(t, srv, "--replay-user-messages")
	s.send(initLine("i1", ""))
	s.until(`"request_id":"i1"`)
	s.send(userLine("hello"))
	s.until(`"type":"result"`)
	for _, prompt := range []string{"/context", "/usage", "/model sonnet", "/effort high", "/rename Foo bar", "/reload-skills", "/agents", "/mcp"} {
		name := strings.Fields(prompt)[0][1:]
		s.send(userLine(prompt))
		var shown, result map[string]any
		for shown == nil || result == nil {
			line := s.until(`"session_id"`)
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			switch {
			case m["isReplay"] == true:
				t.Errorf("%s: echoed (the reference does not echo a local command): %s", prompt, line)
			case m["type"] == "assistant":
				shown = m
			case m["type"] == "result":
				result = m
			}
		}
		for _, k := range objKeys(shown) {
			if !refAssistant[k] {
				t.Errorf("%s: assistant key %q is not the reference's", prompt, k)
			}
		}
		msg := shown["message"].(map[string]any)
		text := msg["content"].([]any)[0].(map[string]any)["text"].(string)
		run, _ := shown["local_command_run"].(map[string]any)
		if msg["model"] != "<synthetic>" || shown["local_command_source"] != "<local-command-stdout>"+text+"</local-command-stdout>" ||
			run["command"] != name || run["args"] != strings.TrimSpace(strings.TrimPrefix(prompt, "/"+name)) {
			t.Errorf("%s: assistant line %v", prompt, shown)
		}
		for _, k := range objKeys(result) {
			if !refResult[k] && !slices.Contains([]string{"terminal_reason"}, k) {
				t.Errorf("%s: result key %q is not the reference's", prompt, k)
			}
		}
		want, ok := refName[name]
		if !ok { // not in the recording (/mcp): the reference's rule
			want = strings.ReplaceAll(name, "-", "_")
		}
		if result["local_command"] != want || result["num_turns"] != 0.0 ||
			result["stop_reason"] != nil || result["result"] != text {
			t.Errorf("%s: result %v (reference local_command %q)", prompt, result, want)
		}
	}
	if code := s.finish(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d model calls, want 1 (hello)", n)
	}
}

// TestSlashCommandTable holds docs/interop.md's "Slash commands" table to
// agentloop's built-in commands (every one "honoured", in order; nothing
// else honoured) and to the reference's recorded list (every command of
// it has a row).
func TestSlashCommandTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/interop.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "\n## Slash commands\n")
	if !ok {
		t.Fatal("docs/interop.md has no Slash commands section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `/([^`]+)` \\| ([^|]+?) \\|")
	var honoured, rows []string
	for _, m := range row.FindAllStringSubmatch(sec, -1) {
		rows = append(rows, m[1])
		if strings.HasPrefix(m[2], "honoured") {
			honoured = append(honoured, m[1])
		} else if m[2] != "not advertised" {
			t.Errorf("/%s: status %q", m[1], m[2])
		}
	}
	if d := cmp.Diff(conversation.BuiltinCommandNames(), honoured); d != "" {
		t.Errorf("honoured rows vs the built-in commands (-code +doc):\n%s", d)
	}
	var refNames []string
	for _, m := range referenceLines(t) {
		if m["type"] == "system" && m["subtype"] == "init" {
			for _, n := range m["slash_commands"].([]any) {
				refNames = append(refNames, n.(string))
			}
		}
	}
	if len(refNames) != 44 {
		t.Fatalf("the recording lists %d commands", len(refNames))
	}
	for _, n := range refNames {
		if !slices.Contains(rows, n) {
			t.Errorf("the reference's /%s has no row", n)
		}
	}
}
