package agentloop

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// basePrompt is agentloop's own system prompt.
const basePrompt = `You are an agent working in a software project on the user's behalf, through the tools you are given.

Work in small, verifiable steps: look before you change anything, prefer the dedicated file tools over shell commands for reading and editing files, and check the effect of each change. When a tool reports an error, read it and adapt instead of repeating the same call. Keep answers short and concrete; when the task is done, say what you did and what remains.`

// systemPrompt assembles the system blocks: the prompt (agentloop's own or
// Options.SystemPrompt), the environment, and Options.AppendSystemPrompt.
func systemPrompt(o *Options, env *tool.Env, modelID string) []model.Content {
	text := basePrompt
	if o.SystemPrompt != "" {
		text = o.SystemPrompt
	}
	blocks := []model.Content{model.TextBlock(text)}
	if o.SystemPrompt == "" {
		blocks = append(blocks, model.TextBlock(envBlock(env, modelID)))
	}
	if o.AppendSystemPrompt != "" {
		blocks = append(blocks, model.TextBlock(o.AppendSystemPrompt))
	}
	return blocks
}

// envBlock describes the environment the tools work in.
func envBlock(env *tool.Env, modelID string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Environment:\n- working directory: %s\n", env.Cwd)
	for _, d := range env.AdditionalDirs {
		fmt.Fprintf(&b, "- additional directory: %s\n", d)
	}
	fmt.Fprintf(&b, "- platform: %s/%s\n- model: %s\n- date: %s", runtime.GOOS, runtime.GOARCH, modelID,
		time.Now().Format("2006-01-02"))
	return b.String()
}
