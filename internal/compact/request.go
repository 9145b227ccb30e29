package compact

import (
	"strings"

	"github.com/agentloop/agentloop/model"
)

// The triggers of a compaction, as hooks and compact_metadata name them.
const (
	TriggerAuto   = "auto"
	TriggerManual = "manual"
)

// system is the system prompt of a summary request.
const system = "You write summaries of conversations between a user and a coding agent. " +
	"A summary replaces the conversation it covers, so the agent must be able to carry on from it alone."

// instruction asks for the summary; it is the last user text of the request.
const instruction = `Stop here and write a summary of the conversation above instead of continuing it. The summary will take the place of the conversation, so write down everything needed to carry on:

1. What the user asked for, in their own terms, including every explicit request, preference and constraint.
2. The work done so far: files read, created or changed (with paths and the substance of each change), commands run and what they showed.
3. Errors met and how they were dealt with, and any feedback the user gave.
4. Decisions taken and the reasons for them.
5. What was in progress at the end, and the next step, quoting the latest request where that helps.

Do not call any tools. Reply with text only: the summary, nothing before or after it.`

// omitted opens a summary request whose history lost its beginning to fit.
const omitted = "(The beginning of the conversation is left out here.)"

// Request describes a summary request.
type Request struct {
	Model string
	// History is the conversation to summarise, already fitted to the
	// window (see [Fit]).
	History []model.Message
	// MaxTokens bounds the summary.
	MaxTokens int
	// Instructions are the summary instructions of the CLAUDE.md files
	// (see [MemoryInstructions]); Custom are the caller's (/compact's
	// arguments). Either may be empty.
	Instructions, Custom string
}

// Build returns the summary request: text only (no tools, no thinking), the
// history followed by the instruction to summarise, which names the
// CLAUDE.md and custom instructions when there are any. The history is not
// modified.
func (r Request) Build() *model.Request {
	text := instruction
	if s := strings.TrimSpace(r.Instructions); s != "" {
		text += "\n\nSummary instructions from the project's CLAUDE.md files, to follow:\n" + s
	}
	if s := strings.TrimSpace(r.Custom); s != "" {
		text += "\n\nAdditional instructions for this summary, to follow:\n" + s
	}
	msgs := make([]model.Message, 0, len(r.History)+2)
	if len(r.History) > 0 && r.History[0].Role != "user" {
		// A fitted history may start with a reply; the API wants a user
		// turn first.
		msgs = append(msgs, model.Message{Role: "user", Content: []model.Content{model.TextBlock(omitted)}})
	}
	msgs = append(msgs, r.History...)
	ask := model.TextBlock(text)
	if n := len(msgs); n > 0 && msgs[n-1].Role == "user" {
		msgs[n-1] = model.Message{Role: "user", Content: append(append([]model.Content(nil), msgs[n-1].Content...), ask)}
	} else {
		msgs = append(msgs, model.Message{Role: "user", Content: []model.Content{ask}})
	}
	for i := range msgs {
		// The request declares no tools, so a tool_reference (a
		// ToolSearch result for an API that loads deferred tools) would
		// name an undeclared tool, which the API refuses: it goes as text.
		if hasReferences(msgs[i].Content) {
			msgs[i] = model.Message{Role: msgs[i].Role, Content: referencesAsText(msgs[i].Content)}
		}
		// Cache breakpoints of the conversation's requests do not
		// belong in this one.
		if hasCacheControl(msgs[i].Content) {
			blocks := append([]model.Content(nil), msgs[i].Content...)
			for k := range blocks {
				blocks[k].CacheControl = nil
			}
			msgs[i] = model.Message{Role: msgs[i].Role, Content: blocks}
		}
	}
	return &model.Request{
		Model:     r.Model,
		MaxTokens: r.MaxTokens,
		Stream:    true,
		System:    []model.Content{model.TextBlock(system)},
		Messages:  msgs,
	}
}

// hasReferences reports whether a tool_result of blocks holds a
// tool_reference block.
func hasReferences(blocks []model.Content) bool {
	for _, b := range blocks {
		if b.Type == model.TypeToolResult {
			for _, in := range b.Blocks {
				if in.Type == model.TypeToolReference {
					return true
				}
			}
		}
	}
	return false
}

// referencesAsText returns a copy of blocks whose tool_results have each
// tool_reference replaced by a text block naming the tool.
func referencesAsText(blocks []model.Content) []model.Content {
	out := append([]model.Content(nil), blocks...)
	for i, b := range out {
		if b.Type != model.TypeToolResult || b.Blocks == nil {
			continue
		}
		inner := append([]model.Content(nil), b.Blocks...)
		for k, in := range inner {
			if in.Type == model.TypeToolReference {
				inner[k] = model.TextBlock("Loaded tool: " + in.ToolName)
			}
		}
		out[i].Blocks = inner
	}
	return out
}

func hasCacheControl(blocks []model.Content) bool {
	for _, b := range blocks {
		if b.CacheControl != nil {
			return true
		}
	}
	return false
}

// InstructionOverhead is the estimated size of the instruction text with
// the given CLAUDE.md and custom instructions, for fitting the history.
func InstructionOverhead(instructions, custom string) int64 {
	return int64(len(system)+len(instruction)+len(instructions)+len(custom))/4 + 64
}

// SummaryText is the text of the user message that replaces the
// summarised conversation. auto marks a compaction in the middle of a
// task, after which the model is to carry on by itself.
func SummaryText(summary string, auto bool) string {
	var b strings.Builder
	b.WriteString("This session continues from an earlier conversation that was compacted to fit the context window. ")
	b.WriteString("The summary below stands for the earlier part of that conversation; any messages after it are the most recent ones, kept as they were.\n\n")
	b.WriteString("<summary>\n")
	b.WriteString(strings.TrimSpace(summary))
	b.WriteString("\n</summary>")
	if auto {
		b.WriteString("\n\nCarry on with the task from where it stopped, without asking the user anything further.")
	}
	return b.String()
}

// Command recognises the slash commands that reach the loop as a prompt:
// name is "compact" or "clear" (also for its aliases "/reset" and "/new")
// and args the rest of the line(s) after the name, trimmed; ok is false
// for any other text. The command must be the
// whole prompt: "/compact focus on the tests" is a command, "please
// /compact" is not.
func Command(prompt string) (name, args string, ok bool) {
	p := strings.TrimSpace(prompt)
	for _, n := range []string{"compact", "clear", "reset", "new"} {
		rest, found := strings.CutPrefix(p, "/"+n)
		if !found {
			continue
		}
		if rest != "" && !strings.ContainsAny(rest[:1], " \t\r\n") {
			continue // "/compactly", "/clearer", "/newline"
		}
		if n == "reset" || n == "new" {
			n = "clear"
		}
		return n, strings.TrimSpace(rest), true
	}
	return "", "", false
}

// MemoryInstructions returns the summary instructions in CLAUDE.md text:
// the sections whose markdown heading mentions "compact" or "summar"
// (Summary instructions, Compact instructions, …), each with its heading,
// up to the next heading of the same or a higher level. "" when there are
// none.
func MemoryInstructions(memory string) string {
	lines := strings.Split(memory, "\n")
	var out []string
	level := 0 // the level of the section being taken; 0: none
	fenced := false
	for _, line := range lines {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "```") {
			fenced = !fenced
		}
		if !fenced && memoryFrame(t) {
			level = 0 // a section ends with its file
			continue
		}
		if h := headingLevel(t); h > 0 && !fenced {
			if level > 0 && h <= level {
				level = 0
			}
			low := strings.ToLower(t)
			if level == 0 && (strings.Contains(low, "compact") || strings.Contains(low, "summar")) {
				level = h
			}
		}
		if level > 0 {
			out = append(out, line)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// memoryFrame reports the lines the CLAUDE.md block puts around the files'
// texts: the "Contents of <path> (<kind>):" line that opens each file and
// the closing tag of the block. They are not instructions.
func memoryFrame(line string) bool {
	return line == "</system-reminder>" || line == "<system-reminder>" ||
		strings.HasPrefix(line, "Contents of ") && strings.HasSuffix(line, "):")
}

// headingLevel is the level of an ATX markdown heading ("## x" is 2), or 0.
func headingLevel(line string) int {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || (n < len(line) && line[n] != ' ' && line[n] != '\t') {
		return 0
	}
	return n
}

// CommandStdout is the output of /compact as the transcript and the stream
// show it, in the local-command markup the reference uses.
const CommandStdout = "<local-command-stdout>Compacted </local-command-stdout>"

// CommandRecord returns the blocks that record /compact (or another
// command that printed [CommandStdout]) in the history after it ran; see
// [LocalCommandRecord].
func CommandRecord(name, args string) []model.Content {
	return localRecord(name, args, CommandStdout)
}

// LocalCommandRecord returns the blocks that record a local command run
// by the user (name without the slash, args as typed) in the history
// after it ran: a note that the command was not addressed to the model,
// the command in the reference's command markup, and its output in
// <local-command-stdout> tags ([LocalStdout]).
func LocalCommandRecord(name, args, output string) []model.Content {
	return localRecord(name, args, LocalStdout(output))
}

// LocalStdout is a local command's output in the markup the history and
// the stream keep it in.
func LocalStdout(output string) string {
	return "<local-command-stdout>" + output + "</local-command-stdout>"
}

func localRecord(name, args, stdout string) []model.Content {
	return []model.Content{
		model.TextBlock("<local-command-caveat>The user ran the command below in the host program; it was not a message to you. " +
			"Do not answer it or mention it unless the user asks about it.</local-command-caveat>"),
		model.TextBlock("<command-name>/" + name + "</command-name>\n            <command-message>" + name +
			"</command-message>\n            <command-args>" + args + "</command-args>"),
		model.TextBlock(stdout),
	}
}
