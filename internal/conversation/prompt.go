package conversation

import (
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
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
	blocks := make([]model.Content, 0, 3) // at most three
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
	return shareSystem(blocks)
}

// lastSystem is the system prompt built last (shareSystem).
var lastSystem struct {
	sync.Mutex
	blocks []model.Content
}

// shareSystem returns blocks, or the equal system prompt built last:
// sessions built alike share one (the engine copies it into each request
// before marking it, and nothing else writes to it).
func shareSystem(blocks []model.Content) []model.Content {
	if len(blocks) == 0 {
		return nil
	}
	l := &lastSystem
	l.Lock()
	defer l.Unlock()
	if len(blocks) == len(l.blocks) {
		same := true
		for i := range blocks {
			a, b := &blocks[i], &l.blocks[i]
			// Pointers: DeepEqual then boxes nothing.
			if a.Type != b.Type || a.Text != b.Text || !reflect.DeepEqual(a, b) {
				same = false
				break
			}
		}
		if same {
			return l.blocks
		}
	}
	l.blocks = slices.Clip(blocks)
	return l.blocks
}

// envBlock describes the environment the tools of env work in.
func envBlock(env *tool.Env, modelID string) string {
	_, git := memory.RepoRoot(env.Cwd)
	return shareText(&lastEnvBlock, sysprompt.Environment(sysprompt.Env{
		Cwd: env.Cwd, AdditionalDirs: env.AdditionalDirs, GitRepo: git,
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Shell: shellOf(env.Environ),
		OSVersion: sysprompt.OSVersion(), Date: time.Now().Format("2006-01-02"), Model: modelID,
	}))
}

// lastEnvBlock is the environment block built last (shareText).
var lastEnvBlock sharedText

// sharedText is the text a kind of per-session text was built last.
type sharedText struct {
	sync.Mutex
	s string
}

// shareText returns s, or the equal text last returned for the same kind:
// sessions built alike (the same working directory and model, as many in
// one process are) then share one copy rather than keep one each.
func shareText(last *sharedText, s string) string {
	last.Lock()
	defer last.Unlock()
	if last.s == s {
		return last.s
	}
	last.s = s
	return s
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
