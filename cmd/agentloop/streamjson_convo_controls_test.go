package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
)

// TestConvoRewindFiles: with file checkpointing on (as the TypeScript SDK
// asks for it, by environment), rewind_files to a replayed user
// message's uuid says what it would change (dry_run) and then undoes
// the turn's writes; an unknown uuid is refused.
func TestConvoRewindFiles(t *testing.T) {
	t.Setenv(envFileCheckpointing, "true")
	srv := agentlooptest.NewTB(t)
	c := startConvo(t, srv, "--replay-user-messages", "--permission-mode", "acceptEdits")
	srv.Push(writeCall("toolu_1", c.dir, "a.txt", "new\n"), agentlooptest.Text("written"))
	c.float(`"isReplay":true`) // written as the line is read, while the turn starts: landed after it
	c.send(initLine("init1", ""))
	c.until(`"request_id":"init1"`)
	c.send(userLine("write a.txt"))
	c.until(`"state":"idle"`)
	var replay struct {
		UUID string `json:"uuid"`
	}
	if json.Unmarshal([]byte(c.land(`"isReplay":true`)), &replay) != nil || replay.UUID == "" {
		t.Fatal("no replayed user message with a uuid")
	}
	path := filepath.Join(c.dir, "a.txt")
	c.send(`{"request_id":"w1","type":"control_request","request":{"subtype":"rewind_files","user_message_id":"` + replay.UUID + `","dry_run":true}}`)
	c.until(`"request_id":"w1"`)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("after the dry run: %v", err)
	}
	c.send(`{"request_id":"w2","type":"control_request","request":{"subtype":"rewind_files","user_message_id":"` + replay.UUID + `"}}`)
	c.until(`"request_id":"w2"`)
	c.send(`{"request_id":"w3","type":"control_request","request":{"subtype":"rewind_files","user_message_id":"00000000-0000-4000-8000-00000000dead"}}`)
	c.until(`"request_id":"w3"`)
	if code := c.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, c.stderr.String())
	}
	c.check("rewind_files")
	if _, err := os.Stat(path); err == nil {
		t.Error("a.txt is still there after the rewind")
	}
}

// TestConvoCancel: control_cancel_request both ways. An interrupt while
// a can_use_tool request is pending withdraws it (engine→host), and the
// host's late answer is dropped quietly; a host withdrawing a request
// of its own (host→engine) gets no answer, as the request was answered
// as it was read, and the session goes on.
func TestConvoCancel(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	c := startConvo(t, srv, "--permission-prompt-tool", "stdio")
	srv.Push(writeCall("toolu_1", c.dir, "x.txt", "x\n"), agentlooptest.Text("next turn"))
	c.send(initLine("init1", ""))
	c.send(userLine("write"))
	id, _ := c.request(c.until(`"subtype":"can_use_tool"`))
	c.send(`{"request_id":"int1","type":"control_request","request":{"subtype":"interrupt"}}`)
	c.until(`"type":"control_cancel_request"`, id)
	c.until(`"request_id":"int1"`)
	c.answer(id, `{"behavior":"allow","updatedInput":{}}`)
	// g1's answer is written as the request is read, racing the end of
	// the interrupted turn (slow under load): landed after that turn.
	c.float(`"request_id":"g1"`)
	c.send(`{"request_id":"g1","type":"control_request","request":{"subtype":"get_context_usage"}}` + "\n" +
		`{"type":"control_cancel_request","request_id":"g1"}` + "\n" +
		`{"type":"control_cancel_request","request_id":"never-sent"}`)
	c.until(`"state":"idle"`)
	c.land(`"request_id":"g1"`)
	c.send(userLine("again"))
	if code := c.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, c.stderr.String())
	}
	c.check("cancel")
	if e := c.stderr.String(); e != "" {
		t.Errorf("stderr %q, want nothing (late answer and cancels are quiet)", e)
	}
	if _, err := os.Stat(filepath.Join(c.dir, "x.txt")); err == nil {
		t.Error("the interrupted call ran")
	}
	if n := strings.Count(strings.Join(c.seen, "\n"), `"type":"control_cancel_request"`); n != 1 {
		t.Errorf("%d control_cancel_request lines, want 1", n)
	}
}

// TestConvoInterrupt: interrupt ends the running turn with its marker and
// an error result, and is answered before them: with nothing queued; with a message
// queued, which is still_queued and runs next (its answer races that
// turn, so it is recorded at the end of its window); and with
// cancel_queued, which drops the queued message.
func TestConvoInterrupt(t *testing.T) {
	var arrivals []chan struct{}
	held := func() agentlooptest.Reply {
		arrived := make(chan struct{})
		arrivals = append(arrivals, arrived)
		r := agentlooptest.Text("never")
		r.Delay = time.Hour
		r.Expect = func(*agentlooptest.Request) error { close(arrived); return nil }
		return r
	}
	srv := agentlooptest.NewTB(t, held(), held(), agentlooptest.Text("after"), held())
	c := startConvo(t, srv, "--replay-user-messages")
	c.float(`"isReplay":true`)
	c.float(`"request_id":"i2"`)
	// running waits until the n-th held request reached the API, so that
	// the interrupt cuts a request in flight.
	running := func(n int) {
		t.Helper()
		select {
		case <-arrivals[n]:
		case <-time.After(20 * time.Second):
			t.Fatalf("held request %d did not arrive", n)
		}
		c.until(`"subtype":"init"`)
		c.land(`"isReplay":true`)
	}
	c.send(initLine("init1", ""))
	c.until(`"request_id":"init1"`)

	c.send(userLine("slow one"))
	running(0)
	c.send(`{"request_id":"i1","type":"control_request","request":{"subtype":"interrupt"}}`)
	c.until(`"request_id":"i1"`)

	c.send(userLine("slow two"))
	running(1)
	c.send(`{"type":"user","session_id":"","uuid":"00000000-0000-4000-8000-0000000000b1","message":{"role":"user","content":[{"type":"text","text":"queued"}]},"parent_tool_use_id":null}`) // echoed when its turn starts (replay.go); listed in still_queued by its uuid
	c.send(`{"request_id":"i2","type":"control_request","request":{"subtype":"interrupt"}}`)
	c.until(`"type":"result"`, `"subtype":"success"`)
	c.until(`"state":"idle"`)
	c.land(`"isReplay":true`)   // "queued", echoed as its turn started
	c.land(`"request_id":"i2"`) // written once the interrupted turn's result is, racing the next turn

	c.send(userLine("slow three"))
	running(2)
	c.send(userLine("dropped")) // cancelled before it runs: never echoed
	c.send(`{"request_id":"i3","type":"control_request","request":{"subtype":"interrupt","cancel_queued":true}}`)
	c.until(`"request_id":"i3"`)
	if code := c.finish(); code == 0 {
		t.Fatalf("exit 0, want 1 after the interrupted last turn; stderr %q", c.stderr.String())
	}
	c.check("interrupt")
	all := strings.Join(c.seen, "\n")
	for _, want := range []string{`"still_queued":[]`, `"still_queued":["`, `"cancelled":["`} {
		if !strings.Contains(all, want) {
			t.Errorf("no %s in the answers", want)
		}
	}
	if n := srv.Len(); n != 4 {
		t.Errorf("%d requests, want 4 (the dropped message must not run)", n)
	}
}

// TestConvoUnsupported: an unknown subtype, and one agentloop does not
// implement, are refused with error_code unsupported_request; a
// malformed request gets an error; the session goes on.
func TestConvoUnsupported(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("still fine"))
	c := startConvo(t, srv)
	c.send(initLine("init1", ""))
	c.until(`"request_id":"init1"`)
	c.send(`{"request_id":"u1","type":"control_request","request":{"subtype":"get_frobnicator"}}`)
	c.until(`"request_id":"u1"`)
	c.send(`{"request_id":"u2","type":"control_request","request":{"subtype":"get_settings"}}`)
	c.until(`"request_id":"u2"`)
	c.send(`{"request_id":"u3","type":"control_request","request":{"subtype":"set_permission_mode"}}`)
	c.until(`"request_id":"u3"`)
	c.send(userLine("still there?"))
	if code := c.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, c.stderr.String())
	}
	c.check("unsupported")
	for _, id := range []string{"u1", "u2"} {
		if !slices.ContainsFunc(c.seen, func(l string) bool {
			return containsAll(l, []string{`"request_id":"` + id + `"`, `"error_code":"unsupported_request"`})
		}) {
			t.Errorf("%s not refused with unsupported_request", id)
		}
	}
}

// TestStreamJSONContextUsageAfterIdle: get_context_usage sent as soon as
// the host reads session_state_changed idle is answered, not refused as
// if the turn were still running.
func TestStreamJSONContextUsageAfterIdle(t *testing.T) {
	const turns = 6
	var replies []agentlooptest.Reply
	for i := range turns {
		replies = append(replies, agentlooptest.Text(fmt.Sprint("reply ", i)))
	}
	srv := agentlooptest.NewTB(t, replies...)
	s := startSJ(t, srv)
	s.send(initLine("init1", ""))
	for i := range turns {
		s.send(userLine(fmt.Sprint("turn ", i)))
		s.until(`"state":"idle"`)
		id := fmt.Sprintf("cu%d", i)
		s.send(`{"request_id":"` + id + `","type":"control_request","request":{"subtype":"get_context_usage"}}`)
		if ans := s.until(`"request_id":"` + id + `"`); !strings.Contains(ans, `"subtype":"success"`) {
			t.Errorf("get_context_usage after turn %d's idle answered %s", i, ans)
		}
	}
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
}
