package conversation_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// checkpointTree is a work directory holding a.txt, and a config
// directory beside it.
func checkpointTree(t *testing.T) (cwd, config string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cwd, config = filepath.Join(base, "work"), filepath.Join(base, "config")
	if err := os.MkdirAll(cwd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return cwd, config
}

func readFileOr(p string) string {
	b, err := os.ReadFile(p)
	if err != nil {
		return "<missing>"
	}
	return string(b)
}

// promptUUIDs returns the uuids of the transcript's user lines whose
// content is one of the prompts, in order.
func promptUUIDs(t *testing.T, path string, prompts ...string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			UUID    string `json:"uuid"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Type != "user" {
			continue
		}
		for _, p := range prompts {
			if strings.Contains(string(line.Message.Content), `"`+p+`"`) {
				out = append(out, line.UUID)
			}
		}
	}
	return out
}

// TestRewindFilesEndToEnd: Write and Edit calls of two prompts, scripted,
// then Client.RewindFiles: a dry run changes nothing, rewinding to the
// second prompt undoes its edit only, rewinding to the first undoes
// everything (the created file is removed); the checkpoint ids are the
// uuids of the prompts' user lines in the transcript.
func TestRewindFilesEndToEnd(t *testing.T) {
	cwd, config := checkpointTree(t)
	a, n := filepath.Join(cwd, "a.txt"), filepath.Join(cwd, "sub", "new.txt")
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_r", "Read", map[string]any{"file_path": a}),
		agentlooptest.ToolUse("toolu_e1", "Edit", map[string]any{"file_path": a, "old_string": "two", "new_string": "TWO\nthree"}),
		agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": n, "content": "fresh\n"}),
		agentlooptest.Text("first done"),
		agentlooptest.ToolUse("toolu_e2", "Edit", map[string]any{"file_path": a, "old_string": "one", "new_string": "ONE"}),
		agentlooptest.Text("second done"))
	c, err := agentloop.NewClient(&agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: config,
		Tools: []string{"Read", "Edit", "Write"}, PermissionMode: agentloop.PermissionBypass,
		SettingSources: []settings.SettingSource{}, EnableFileCheckpointing: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Query(ctx, "first prompt").Result(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(ctx, "second prompt").Result(); err != nil {
		t.Fatal(err)
	}
	if got := readFileOr(a); got != "ONE\nTWO\nthree\n" {
		t.Fatalf("a.txt after the prompts = %q", got)
	}

	ids := c.FileCheckpoints()
	want := promptUUIDs(t, sessions.Path(config, cwd, c.SessionID()), "first prompt", "second prompt")
	if len(ids) != 2 || cmp.Diff(want, ids) != "" {
		t.Fatalf("checkpoint ids %q, want the prompts' user line uuids %q", ids, want)
	}
	if _, err := os.Stat(filepath.Join(config, "file-history", c.SessionID(), "index.jsonl")); err != nil {
		t.Errorf("the store is not under the config directory: %v", err)
	}

	dry, err := c.RewindFiles(ctx, ids[0], &agentloop.RewindOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	wantDry := &agentloop.RewindFilesResult{CanRewind: true, FilesChanged: []string{a, n}, Insertions: 2, Deletions: 4}
	if d := cmp.Diff(wantDry, dry, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("dry run (-want +got):\n%s", d)
	}
	if readFileOr(a) != "ONE\nTWO\nthree\n" || readFileOr(n) != "fresh\n" {
		t.Fatal("the dry run changed files")
	}

	second, err := c.RewindFiles(ctx, ids[1], nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&agentloop.RewindFilesResult{CanRewind: true, FilesChanged: []string{a}, Insertions: 1, Deletions: 1},
		second, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("rewind to the second prompt (-want +got):\n%s", d)
	}
	if got := readFileOr(a); got != "one\nTWO\nthree\n" {
		t.Errorf("a.txt = %q, want the first prompt's edit only", got)
	}

	first, err := c.RewindFiles(ctx, ids[0], nil)
	if err != nil || !first.CanRewind || len(first.FilesChanged) != 2 {
		t.Fatalf("rewind to the first prompt: %+v, %v", first, err)
	}
	if got := readFileOr(a); got != "one\ntwo\n" {
		t.Errorf("a.txt = %q, want the original", got)
	}
	if got := readFileOr(n); got != "<missing>" {
		t.Errorf("sub/new.txt = %q, want it removed", got)
	}

	unknown, err := c.RewindFiles(ctx, "00000000-0000-4000-8000-00000000dead", nil)
	if err != nil || unknown.CanRewind || unknown.Error == "" {
		t.Errorf("unknown id: %+v, %v; want CanRewind false with an error text", unknown, err)
	}

	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RewindFiles(ctx, ids[0], nil); !errors.Is(err, agentloop.ErrClosed) {
		t.Errorf("after Close: %v, want ErrClosed", err)
	}
}

// TestRewindFilesSkipsSwappedLink: a link put in place of an edited file
// after the edit is reported, and its target is not written.
func TestRewindFilesSkipsSwappedLink(t *testing.T) {
	cwd, config := checkpointTree(t)
	a := filepath.Join(cwd, "a.txt")
	outside := filepath.Join(filepath.Dir(cwd), "outside.txt")
	if err := os.WriteFile(outside, []byte("not yours\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": a, "content": "changed\n"}),
		agentlooptest.Text("done"))
	c, err := agentloop.NewClient(&agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: config,
		Tools: []string{"Write"}, PermissionMode: agentloop.PermissionBypass,
		SettingSources: []settings.SettingSource{}, EnableFileCheckpointing: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Query(context.Background(), "go").Result(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, a); err != nil {
		t.Fatal(err)
	}
	res, err := c.RewindFiles(context.Background(), c.FileCheckpoints()[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(&agentloop.RewindFilesResult{CanRewind: true, SkippedLinks: []string{a}}, res, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("result (-want +got):\n%s", d)
	}
	if got := readFileOr(outside); got != "not yours\n" {
		t.Errorf("the link's target holds %q", got)
	}
}

// TestFileCheckpointingOptions: RewindFiles needs checkpointing on; the
// option cannot go with a SessionStore; the environment variable turns
// it on; with NoSessionPersistence the store is temporary.
func TestFileCheckpointingOptions(t *testing.T) {
	cwd, config := checkpointTree(t)
	base := agentloop.Options{Cwd: cwd, ConfigDir: config, SettingSources: []settings.SettingSource{}}
	ctx := context.Background()

	off := base
	off.Provider = provider(t, agentlooptest.NewTB(t), nil)
	c, err := agentloop.NewClient(&off)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RewindFiles(ctx, "x", nil); !errors.Is(err, agentloop.ErrFileCheckpointingOff) {
		t.Errorf("checkpointing off: %v, want ErrFileCheckpointingOff", err)
	}
	c.Close()

	withStore := base
	withStore.Provider = off.Provider
	withStore.EnableFileCheckpointing = true
	withStore.SessionStore = sessions.NewMemoryStore()
	if _, err := agentloop.NewClient(&withStore); !errors.Is(err, agentloop.ErrInvalidOption) {
		t.Errorf("with a SessionStore: %v, want ErrInvalidOption", err)
	}

	temp := base
	temp.Provider = off.Provider
	temp.NoSessionPersistence = true
	t.Setenv("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING", "true")
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": filepath.Join(cwd, "b.txt"), "content": "b\n"}),
		agentlooptest.Text("done"))
	temp.Provider = provider(t, srv, nil)
	temp.Tools, temp.PermissionMode = []string{"Write"}, agentloop.PermissionBypass
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "agentloop-file-history-*"))
	c, err = agentloop.NewClient(&temp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(ctx, "go").Result(); err != nil {
		t.Fatal(err)
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "agentloop-file-history-*"))
	var tempStore string
	for _, d := range after {
		if !slices.Contains(before, d) {
			tempStore = d
		}
	}
	if tempStore == "" {
		t.Fatal("NoSessionPersistence: no temporary store")
	}
	ids := c.FileCheckpoints()
	if len(ids) != 1 {
		t.Fatalf("checkpoint ids %q, want one (the variable turns checkpointing on)", ids)
	}
	if _, err := os.Stat(filepath.Join(config, "file-history")); err == nil {
		t.Error("NoSessionPersistence: the store was written under the config directory")
	}
	if res, err := c.RewindFiles(ctx, ids[0], nil); err != nil || len(res.FilesChanged) != 1 {
		t.Errorf("rewind: %+v, %v", res, err)
	}
	if got := readFileOr(filepath.Join(cwd, "b.txt")); got != "<missing>" {
		t.Errorf("b.txt = %q, want it removed", got)
	}
	c.Close()
	if _, err := os.Stat(tempStore); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary store is still there after Close: %v", err)
	}
}

// TestRewindFilesAfterResume: a resumed session reopens its store and
// rewinds to a prompt of the earlier run.
func TestRewindFilesAfterResume(t *testing.T) {
	cwd, config := checkpointTree(t)
	a := filepath.Join(cwd, "a.txt")
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": a, "content": "first run\n"}),
		agentlooptest.Text("done"),
		agentlooptest.Text("still here"))
	opts := agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: config,
		Tools: []string{"Write"}, PermissionMode: agentloop.PermissionBypass,
		SettingSources: []settings.SettingSource{}, EnableFileCheckpointing: true,
	}
	c, err := agentloop.NewClient(&opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(context.Background(), "go").Result(); err != nil {
		t.Fatal(err)
	}
	ids, sid := c.FileCheckpoints(), c.SessionID()
	c.Close()

	opts.Resume = sid
	r, err := agentloop.NewClient(&opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Query(context.Background(), "again").Result(); err != nil {
		t.Fatal(err)
	}
	if got := r.FileCheckpoints(); len(got) != 2 || got[0] != ids[0] {
		t.Fatalf("checkpoints after resume %q, want the earlier %q first", got, ids)
	}
	res, err := r.RewindFiles(context.Background(), ids[0], nil)
	if err != nil || len(res.FilesChanged) != 1 {
		t.Fatalf("rewind: %+v, %v", res, err)
	}
	if got := readFileOr(a); got != "one\ntwo\n" {
		t.Errorf("a.txt = %q, want the original", got)
	}
}

// TestRewindFilesStreamingUUID: with streaming input, the uuid a message
// is sent with names its checkpoint.
func TestRewindFilesStreamingUUID(t *testing.T) {
	cwd, config := checkpointTree(t)
	a := filepath.Join(cwd, "a.txt")
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": a, "content": "streamed\n"}),
		agentlooptest.Text("done"))
	c, err := agentloop.NewClient(&agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: config,
		Tools: []string{"Write"}, PermissionMode: agentloop.PermissionBypass,
		SettingSources: []settings.SettingSource{}, EnableFileCheckpointing: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const id = "11111111-2222-4333-8444-555555555555"
	if _, err := c.Send(agentloop.UserInput{Text: "write it", UUID: id}); err != nil {
		t.Fatal(err)
	}
	for m, err := range c.Messages(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(*agentloop.ResultMessage); ok {
			break
		}
	}
	if d := cmp.Diff([]string{id}, c.FileCheckpoints()); d != "" {
		t.Fatalf("checkpoint ids (-want +got):\n%s", d)
	}
	res, err := c.RewindFiles(context.Background(), id, nil)
	if err != nil || len(res.FilesChanged) != 1 {
		t.Fatalf("rewind: %+v, %v", res, err)
	}
	if got := readFileOr(a); got != "one\ntwo\n" {
		t.Errorf("a.txt = %q, want the original", got)
	}
}

// TestRewindFilesSubagentEdit: a subagent's Write is saved under the
// prompt that ran the subagent, and rewound with it.
func TestRewindFilesSubagentEdit(t *testing.T) {
	cwd, config := checkpointTree(t)
	a := filepath.Join(cwd, "a.txt")
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "edit", "prompt": "Rewrite a.txt."}),
		agentlooptest.ToolUse("toolu_sw", "Write", map[string]any{"file_path": a, "content": "by the subagent\n"}),
		agentlooptest.Text("rewritten"),
		agentlooptest.Text("done"))
	c, err := agentloop.NewClient(&agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: config,
		Tools: []string{"Agent", "Write"}, PermissionMode: agentloop.PermissionBypass,
		SettingSources: []settings.SettingSource{}, EnableFileCheckpointing: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Query(context.Background(), "delegate").Result(); err != nil {
		t.Fatal(err)
	}
	if got := readFileOr(a); got != "by the subagent\n" {
		t.Fatalf("a.txt = %q: the subagent did not write", got)
	}
	ids := c.FileCheckpoints()
	if len(ids) != 1 {
		t.Fatalf("checkpoints %q, want only the prompt's (a subagent's prompt starts none)", ids)
	}
	res, err := c.RewindFiles(context.Background(), ids[0], nil)
	if err != nil || len(res.FilesChanged) != 1 {
		t.Fatalf("rewind: %+v, %v", res, err)
	}
	if got := readFileOr(a); got != "one\ntwo\n" {
		t.Errorf("a.txt = %q, want the original", got)
	}
}
