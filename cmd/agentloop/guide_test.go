package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// guideControlRequests reads the "Not supported yet" section of
// docs/guide.md: the control requests it says the command answers, and
// those it says get an unsupported_request error.
func guideControlRequests(t *testing.T) (answered, unsupported []string) {
	t.Helper()
	b, err := os.ReadFile("../../docs/guide.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "## Not supported yet\n")
	if !ok {
		t.Fatal(`docs/guide.md has no "Not supported yet" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	sec = strings.Join(strings.Fields(sec), " ")
	m := regexp.MustCompile(`The command answers (.*?); every other request \((.*?)\) gets an ` + "`unsupported_request`").FindStringSubmatch(sec)
	if m == nil {
		t.Fatalf("the section does not say which control requests are answered: %s", sec)
	}
	span := regexp.MustCompile("`([a-z_]+)`")
	for _, s := range span.FindAllStringSubmatch(m[1], -1) {
		answered = append(answered, s[1])
	}
	for _, s := range span.FindAllStringSubmatch(m[2], -1) {
		unsupported = append(unsupported, s[1])
	}
	if len(answered) == 0 || len(unsupported) == 0 {
		t.Fatalf("no requests named in %q", m[0])
	}
	return answered, unsupported
}

// TestGuideControlRequests holds the guide to the driver: each control
// request the guide says the command answers gets an answer other than
// unsupported_request, and each it names as unsupported gets that error.
func TestGuideControlRequests(t *testing.T) {
	answered, unsupported := guideControlRequests(t)
	srv := agentlooptest.NewTB(t)
	s := startSJ(t, srv)
	s.send(initLine("init1", ""))
	s.until(`"request_id":"init1"`)
	// fields makes each request well-formed, so that what answers it is
	// the handling, not the parser.
	fields := map[string]string{
		"set_permission_mode":     `,"mode":"default"`,
		"set_model":               `,"model":"sonnet"`,
		"set_max_thinking_tokens": `,"max_thinking_tokens":2048`,
		"mcp_reconnect":           `,"serverName":"none"`,
		"mcp_toggle":              `,"serverName":"none","enabled":true`,
		"mcp_message":             `,"server_name":"none","message":{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		"rewind_files":            `,"user_message_id":"00000000-0000-4000-8000-000000000001","dry_run":true`,
		"cancel_async_message":    `,"message_uuid":"00000000-0000-4000-8000-000000000002"`,
		"apply_flag_settings":     `,"settings":{}`,
		"stop_task":               `,"task_id":"t1"`,
		"mcp_set_servers":         `,"servers":{}`,
		"rename_session":          `,"title":"x"`,
	}
	ask := func(subtype string) string {
		t.Helper()
		id := "q_" + subtype
		s.send(`{"request_id":"` + id + `","type":"control_request","request":{"subtype":"` + subtype + `"` + fields[subtype] + `}}`)
		return s.until(`"request_id":"` + id + `"`)
	}
	const refusal, malformed = "Unsupported control request subtype", "malformed control request"
	for _, sub := range answered {
		if sub == "initialize" {
			continue // answered above
		}
		if l := ask(sub); strings.Contains(l, refusal) || strings.Contains(l, malformed) {
			t.Errorf("the guide says %s is answered, but: %s", sub, l)
		}
	}
	for _, sub := range unsupported {
		if l := ask(sub); !strings.Contains(l, refusal) {
			t.Errorf("the guide says %s is unsupported, but: %s", sub, l)
		}
	}
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
}
