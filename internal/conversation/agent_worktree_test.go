package conversation_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
)

// gitRepo makes a git repository with one commit in a new temporary
// directory.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"},
		{"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// mkfileTool writes made.txt in the directory its loop works in.
func mkfileTool() agentloop.Tool {
	return agentloop.NewTool("mkfile", "Writes made.txt.", func(ctx context.Context, in echoIn, call *agentloop.ToolCall) (agentloop.ToolResult, error) {
		p := filepath.Join(call.Env.Cwd, "made.txt")
		if err := os.WriteFile(p, []byte(in.Text), 0o600); err != nil {
			return agentloop.ToolResult{}, err
		}
		return agentloop.ToolResult{Content: []model.Content{model.TextBlock("wrote " + p)}}, nil
	}, nil)
}

func worktreeOpts(t *testing.T, srv *agentlooptest.Server, cwd string) *agentloop.Options {
	return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, SettingSources: []settings.SettingSource{},
		Tools: []string{"Agent"}, CustomTools: []agentloop.Tool{mkfileTool()}, PermissionMode: agentloop.PermissionBypass,
		NoSessionPersistence: true,
		Agents: map[string]agentloop.AgentDefinition{
			"builder": {Description: "Builds", Prompt: "You build in a worktree.", Tools: []string{"mkfile"}},
		}}
}

func isBuilder(r *agentlooptest.Request) bool {
	return strings.Contains(r.SystemText(), "You build in a worktree.")
}

func worktreeCall(id string) agentlooptest.Reply {
	return agentlooptest.ToolUse(id, "Agent", map[string]any{"description": "Build", "prompt": "Build it.",
		"subagent_type": "builder", "isolation": "worktree"})
}

// agentStructured is the structured result of the Agent call id.
func agentStructured(t *testing.T, msgs []agentloop.Message, id string) map[string]any {
	t.Helper()
	for _, m := range msgs {
		u, ok := m.(*agentloop.UserMessage)
		if !ok || len(u.Message.Content) == 0 || u.Message.Content[0].ToolUseID != id {
			continue
		}
		b, _ := json.Marshal(u.ToolUseResult)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return out
	}
	t.Fatalf("no result for %s", id)
	return nil
}

// TestAgentWorktreeKept: a subagent with isolation worktree works in a new
// worktree of the repository (the main checkout is untouched); the
// worktree it changed is kept and reported.
func TestAgentWorktreeKept(t *testing.T) {
	repo := gitRepo(t)
	srv := agentlooptest.NewTB(t, worktreeCall("toolu_a"), agentlooptest.Text("Built."))
	srv.Route(isBuilder, agentlooptest.ToolUse("toolu_m", "mkfile", map[string]any{"text": "new"}), agentlooptest.Text("made it"))
	msgs, err := agentloop.Query(context.Background(), "Build in isolation.", worktreeOpts(t, srv, repo)).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(repo, "made.txt")); err == nil {
		t.Error("the subagent wrote into the main checkout")
	}
	st := agentStructured(t, msgs, "toolu_a")
	path, _ := st["worktreePath"].(string)
	branch, _ := st["worktreeBranch"].(string)
	if !strings.HasPrefix(path, filepath.Join(repo, ".claude", "worktrees")+string(filepath.Separator)) || branch == "" {
		t.Fatalf("worktreePath %q, worktreeBranch %q: want a kept worktree under .claude/worktrees", path, branch)
	}
	if b, err := os.ReadFile(filepath.Join(path, "made.txt")); err != nil || string(b) != "new" {
		t.Errorf("made.txt in the worktree: %q, %v", b, err)
	}
	if text, _ := toolResultText(msgs, "toolu_a"); !strings.Contains(text, path) {
		t.Errorf("the model is not told where the worktree is: %q", text)
	}
	out, _ := exec.Command("git", "-C", repo, "branch", "--list", branch).Output()
	if !strings.Contains(string(out), branch) {
		t.Errorf("branch %s missing", branch)
	}
}

// TestAgentWorktreeClean: a worktree the subagent did not change is
// removed with its branch, and nothing is reported.
func TestAgentWorktreeClean(t *testing.T) {
	repo := gitRepo(t)
	srv := agentlooptest.NewTB(t, worktreeCall("toolu_a"), agentlooptest.Text("Nothing to do."))
	srv.Route(isBuilder, agentlooptest.Text("nothing needed"))
	msgs, err := agentloop.Query(context.Background(), "Build in isolation.", worktreeOpts(t, srv, repo)).Collect()
	if err != nil {
		t.Fatal(err)
	}
	st := agentStructured(t, msgs, "toolu_a")
	if _, ok := st["worktreePath"]; ok || st["status"] != "completed" {
		t.Errorf("structured result %v: want completed without worktreePath", st)
	}
	entries, _ := os.ReadDir(filepath.Join(repo, ".claude", "worktrees"))
	if len(entries) != 0 {
		t.Errorf("worktrees left: %v", entries)
	}
	out, _ := exec.Command("git", "-C", repo, "branch", "--list", "worktree-*").Output()
	if strings.TrimSpace(string(out)) != "" {
		t.Errorf("branches left: %s", out)
	}
	wl, _ := exec.Command("git", "-C", repo, "worktree", "list", "--porcelain").Output()
	if strings.Count(string(wl), "worktree ") != 1 {
		t.Errorf("git worktree list:\n%s", wl)
	}
}

// TestAgentIsolationErrors: worktree isolation outside a repository, and
// remote isolation, fail as tool errors the model can read; no subagent
// runs.
func TestAgentIsolationErrors(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.Blocks(agentlooptest.ToolUseBlock("toolu_w", "Agent", map[string]any{"description": "Build", "prompt": "Build it.",
			"subagent_type": "builder", "isolation": "worktree"}),
			agentlooptest.ToolUseBlock("toolu_r", "Agent", map[string]any{"description": "Build", "prompt": "Build it.",
				"subagent_type": "builder", "isolation": "remote"})),
		agentlooptest.Text("Could not."),
	)
	msgs, err := agentloop.Query(context.Background(), "Build in isolation.", worktreeOpts(t, srv, t.TempDir())).Collect()
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"toolu_w": "not inside a git repository", "toolu_r": "not supported"} {
		if text, isErr := toolResultText(msgs, id); !isErr || !strings.Contains(text, want) {
			t.Errorf("%s: %q (error %v), want an error saying %q", id, text, isErr, want)
		}
	}
}
