package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

//go:embed skill.md
var skillDescription string

const skillSchema = `{
  "type": "object",
  "properties": {
    "skill": {"type": "string", "description": "The name of the skill, as listed"},
    "args": {"type": "string", "description": "Optional arguments for the skill"}
  },
  "required": ["skill"],
  "additionalProperties": false
}`

type skillInput struct {
	Skill string `json:"skill"`
	Args  string `json:"args,omitempty"`
}

// SkillDoc is what the Skill tool hands the model for one skill.
type SkillDoc struct {
	Name string
	// Dir is the skill's directory and Files its supporting files,
	// relative to Dir.
	Dir   string
	Files []string
	// Text is the skill's body with the call's args already filled in.
	Text string
	// AllowedTools are the permission rules the skill asks for; they are
	// reported in the structured result.
	AllowedTools []string
}

// SkillLoader finds the skill called name and renders it for args. ok is
// false when no such skill exists; known then lists the names that do.
type SkillLoader func(ctx context.Context, name, args string) (doc SkillDoc, known []string, ok bool, err error)

// Skill returns the Skill tool, which loads a skill's instructions into
// the conversation. load looks skills up; a name the session does not
// know is an is_error result naming the known ones, a failing load an
// is_error result (a skill file that vanished is the model's problem to
// route around, not the session's). The tool changes nothing, so calls
// run concurrently with other read-only calls. Whether a call may run at
// all is the permission layer's business (rules Skill(name)): the tool
// reads the body only once the call was allowed.
func Skill(load SkillLoader) tool.Tool {
	return tool.New("Skill", skillDescription, func(ctx context.Context, in skillInput, _ *tool.Call) (tool.Result, error) {
		name := strings.TrimPrefix(strings.TrimSpace(in.Skill), "/")
		if name == "" {
			return tool.Error("skill must name one of the listed skills"), nil
		}
		doc, known, ok, err := load(ctx, name, in.Args)
		if err != nil {
			return tool.Error(fmt.Sprintf("Cannot load skill %q: %v", name, err)), nil
		}
		if !ok {
			sort.Strings(known)
			list := "none"
			if len(known) > 0 {
				list = strings.Join(known, ", ")
			}
			return tool.Error(fmt.Sprintf("Unknown skill: %s. Available skills: %s", name, list)), nil
		}
		return skillResult(doc), nil
	}, &tool.Options{ReadOnly: true, AlwaysLoad: true, Schema: json.RawMessage(skillSchema)})
}

// skillResult is the tool result of a loaded skill. As in the reference
// (testdata/conformance/t_skill of the module), the result only says the
// skill is launching; the skill's instructions follow the reply's tool
// results as text of their own (tool.Result.FollowUp): its base
// directory, its supporting files, then its body.
func skillResult(doc SkillDoc) tool.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "Base directory for this skill: %s\n", doc.Dir)
	if len(doc.Files) > 0 {
		b.WriteString("Supporting files (relative to the base directory):\n")
		for _, f := range doc.Files {
			b.WriteString("- " + f + "\n")
		}
	}
	b.WriteString("\n" + doc.Text)
	structured := map[string]any{"success": true, "commandName": doc.Name, "status": "inline"}
	if len(doc.AllowedTools) > 0 {
		structured["allowedTools"] = doc.AllowedTools
	}
	res := tool.Text("Launching skill: " + doc.Name)
	res.Structured = structured
	res.FollowUp = []model.Content{model.TextBlock(b.String())}
	return res
}
