package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	rec "github.com/agentloop/agentloop/internal/transcript"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// runBreakingDisk runs a Query whose tool "fill" calls breakDisk: the
// transcript writes after it fail. It returns the stream's
// session_writes_lost messages and the result.
func runBreakingDisk(t *testing.T, configDir string, breakDisk func() error) ([]*agentloop.SystemMessage, *agentloop.ResultMessage) {
	t.Helper()
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "fill", map[string]any{}), agentlooptest.Text("Done."))
	fill := agentloop.NewTool("fill", "Fills the disk.", func(ctx context.Context, _ struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		if err := breakDisk(); err != nil {
			return agentloop.ToolResult{}, err
		}
		// A result larger than a page: its transcript line needs new
		// pages of a full file system.
		return agentloop.TextResult("filled " + strings.Repeat("x", 16<<10)), nil
	}, nil)
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: configDir, Tools: []string{},
		CustomTools: []agentloop.Tool{fill}, PermissionMode: agentloop.PermissionBypass, SettingSources: []settings.SettingSource{}}
	var lost []*agentloop.SystemMessage
	var res *agentloop.ResultMessage
	for m, err := range agentloop.Query(context.Background(), "Fill the disk", opts) {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "session_writes_lost" {
			lost = append(lost, s)
		}
		if r, ok := m.(*agentloop.ResultMessage); ok {
			res = r
		}
	}
	if res == nil {
		t.Fatal("no result")
	}
	return lost, res
}

// checkENOSPC checks that the loss was reported once in the stream and on
// the result, as ENOSPC of the transcript.
func checkENOSPC(t *testing.T, lost []*agentloop.SystemMessage, res *agentloop.ResultMessage) {
	t.Helper()
	if len(lost) != 1 {
		t.Fatalf("%d session_writes_lost messages, want 1", len(lost))
	}
	var code string
	json.Unmarshal(lost[0].Data["error_code"], &code)
	if code != "ENOSPC" {
		t.Errorf("session_writes_lost error_code = %q, want ENOSPC (data %v)", code, lost[0].Data)
	}
	w := res.SessionWritesLost
	if w == nil {
		t.Fatalf("the result does not say the transcript lost writes: %+v", res)
	}
	if diff := cmp.Diff([]string{"transcript"}, w.Lost); diff != "" || w.ErrorCode != "ENOSPC" || len(w.TranscriptSessionIDs) != 1 ||
		w.TranscriptSessionIDs[0] != res.SessionID || w.Error == "" {
		t.Errorf("result.SessionWritesLost = %+v", w)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"session_writes_lost":{"error_code":"ENOSPC"`) {
		t.Errorf("result JSON lacks session_writes_lost: %s", b)
	}
}

// Writes failing mid-run (injected, as on any platform and user): the
// stream says so with error_code, and the result carries the loss.
func TestSessionWritesLostOnResult(t *testing.T) {
	var broken atomic.Bool
	t.Cleanup(rec.SetWriteFaultForTest(func() error {
		if broken.Load() {
			return fmt.Errorf("write: %w", syscall.ENOSPC)
		}
		return nil
	}))
	lost, res := runBreakingDisk(t, t.TempDir(), func() error { broken.Store(true); return nil })
	checkENOSPC(t, lost, res)
}

// A run without failures has no loss on its result.
func TestSessionWritesNotLost(t *testing.T) {
	lost, res := runBreakingDisk(t, t.TempDir(), func() error { return nil })
	if len(lost) != 0 || res.SessionWritesLost != nil {
		t.Errorf("writes lost reported without a failure: %v %+v", lost, res.SessionWritesLost)
	}
}

// A real full file system: ConfigDir on a 64 KiB tmpfs that the tool fills.
// It needs root and mount(2); elsewhere it is skipped, saying why.
func TestSessionWritesLostFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a size-limited tmpfs; TestSessionWritesLostOnResult covers the loss by injection")
	}
	dir := t.TempDir()
	if out, err := runCmd("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s); TestSessionWritesLostOnResult covers the loss by injection", err, out)
	}
	t.Cleanup(func() {
		if out, err := runCmd("umount", dir); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	lost, res := runBreakingDisk(t, dir, func() error {
		f, err := os.Create(filepath.Join(dir, "filler"))
		if err != nil {
			return err
		}
		defer f.Close()
		chunk := make([]byte, 4096)
		for i := 0; i < 1024; i++ {
			if _, err := f.Write(chunk); err != nil {
				if errors.Is(err, syscall.ENOSPC) {
					return nil
				}
				return err
			}
		}
		return errors.New("the tmpfs never filled up")
	})
	checkENOSPC(t, lost, res)
}

// A 4 MB prompt grows the transcript by about 4 MB, not twice that (the
// last-prompt entry keeps a bounded form), and listing still shows the
// prompt's start.
func TestLargePromptStoredOnce(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Read it."))
	cwd, configDir := t.TempDir(), t.TempDir()
	prompt := "BIGPROMPT " + strings.Repeat("all work and no play ", 4<<20/21)
	// Automatic compaction would summarise a prompt past the window.
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: configDir, Tools: []string{},
		SettingSources: []settings.SettingSource{}, DisableAutoCompact: true}
	res, err := agentloop.Query(context.Background(), prompt, opts).Result()
	if err != nil {
		t.Fatal(err)
	}
	p := session.Path(configDir, cwd, res.SessionID)
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a %d-byte prompt made a %d-byte transcript", len(prompt), fi.Size())
	if limit := int64(len(prompt)) + 512<<10; fi.Size() > limit {
		t.Errorf("transcript is %d bytes for a %d-byte prompt, want < %d: the prompt is stored twice", fi.Size(), len(prompt), limit)
	}
	infos, err := session.List(configDir, cwd, session.ListOptions{})
	if err != nil || len(infos) != 1 || !strings.HasPrefix(infos[0].Summary, "BIGPROMPT all work") {
		t.Errorf("List = %+v, %v; want the session with the prompt's start as summary", infos, err)
	}
	tr, err := session.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if h := tr.History(); len(h) != 2 || h[0].Content[0].Text != prompt {
		t.Errorf("the history does not hold the whole prompt (%d messages)", len(h))
	}
}

// runCmd runs a command with a bound.
func runCmd(name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}
