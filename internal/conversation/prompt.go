package conversation

import (
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/agentloop/agentloop/internal/memory"
	"github.com/agentloop/agentloop/internal/sysprompt"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// systemPrompt assembles the system blocks: the prompt (agentloop's own,
// internal/sysprompt, or Options.SystemPrompt), the environment (with
// agentloop's prompt, unless ExcludeDynamicSystemPrompt moves it to the
// first user message) and Options.AppendSystemPrompt.
//
// base, when non-empty, takes the place of agentloop's own prompt (the
// main-thread agent's prompt, agent_main.go).
func systemPrompt(o *Config, env *tool.Env, modelID, base string) []model.Content {
	var blocks []model.Content
	switch {
	case o.EmptySystemPrompt:
		// no prompt of agentloop's own (systemprompt_empty.go)
	case o.SystemPrompt != "":
		blocks = append(blocks, model.TextBlock(o.SystemPrompt))
	default:
		if base == "" {
			base = sysprompt.Base
		}
		blocks = append(blocks, model.TextBlock(base))
		if !o.ExcludeDynamicSystemPrompt {
			blocks = append(blocks, model.TextBlock(envBlock(env, modelID)))
		}
	}
	if o.AppendSystemPrompt != "" {
		blocks = append(blocks, model.TextBlock(o.AppendSystemPrompt))
	}
	return blocks
}

// envBlock describes the environment the tools of env work in.
func envBlock(env *tool.Env, modelID string) string {
	_, git := memory.RepoRoot(env.Cwd)
	return sysprompt.Environment(sysprompt.Env{
		Cwd: env.Cwd, AdditionalDirs: env.AdditionalDirs, GitRepo: git,
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Shell: shellOf(env.Environ),
		OSVersion: sysprompt.OSVersion(), Date: time.Now().Format("2006-01-02"), Model: modelID,
	})
}

// shellOf is the user's shell: SHELL in environ (nil: the process's).
func shellOf(environ []string) string {
	if environ == nil {
		environ = os.Environ()
	}
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], "SHELL="); ok {
			return v
		}
	}
	return ""
}
