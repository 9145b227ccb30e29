package conversation

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/settings"
)

// The settings' autoMode object customises the auto-mode classifier: the
// rules it approves by (allow), the actions it refuses unless the user's
// request plainly asks for them (soft_deny), the ones it always refuses
// (hard_deny), facts about the environment (environment), and
// classifyAllShell, which sends every shell command to the classifier even
// when an allow rule covers it. "$defaults" in a list stands for
// agentloop's own text for that section; a list without it replaces that
// text.

// autoModeRules is the parsed autoMode object.
type autoModeRules struct {
	Allow            []string `json:"allow"`
	SoftDeny         []string `json:"soft_deny"`
	HardDeny         []string `json:"hard_deny"`
	Environment      []string `json:"environment"`
	ClassifyAllShell bool     `json:"classifyAllShell"`
}

// The classifier prompt's sections, as agentloop writes them by default.
const (
	classifierIntro = `You review one action that an autonomous coding agent wants to take, on behalf of a user who is not watching.`
	classifierAllow = `Approve actions that a careful engineer would take without asking inside the project's working directories: reading, building, testing, editing project files.`
	classifierDeny  = `Deny actions that are destructive beyond the project, touch credentials or system configuration, send data to other machines, or cannot be undone.`
	classifierReply = `Answer with one line of JSON and nothing else: {"decision": "allow" or "deny", "reason": "<one short sentence>"}.`
)

// readAutoMode reads the settings' autoMode object; nil when no file sets
// it. A malformed object is an error naming the key: the session must not
// run auto mode with rules it cannot read.
func readAutoMode(st *settings.Settings, warn func(string)) (*autoModeRules, error) {
	raw, ok := st.Extra["autoMode"]
	if !ok {
		return nil, nil
	}
	var r autoModeRules
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%w: settings: autoMode: %w", ErrInvalidOption, err)
	}
	if settings.RepoShipped(st.ExtraSource["autoMode"]) && (r.Allow != nil || r.Environment != nil) {
		// A repository may tighten the classifier, never loosen it.
		r.Allow, r.Environment = nil, nil
		warn("autoMode.allow and autoMode.environment are ignored from " + string(st.ExtraSource["autoMode"]) +
			" settings: a file a repository can ship may not widen what auto mode approves")
	}
	return &r, nil
}

// classifierSystem is the classifier's system prompt under rules (nil: the
// defaults).
func classifierSystem(rules *autoModeRules) string {
	if rules == nil {
		return classifierIntro + " " + classifierAllow + " " + classifierDeny + "\n\n" + classifierReply
	}
	section := func(list []string, def string) []string {
		if list == nil {
			if def == "" {
				return nil
			}
			return []string{def}
		}
		var out []string
		for _, item := range list {
			if strings.TrimSpace(item) == "$defaults" {
				if def != "" {
					out = append(out, def)
				}
				continue
			}
			if item = strings.TrimSpace(item); item != "" {
				out = append(out, item)
			}
		}
		return out
	}
	var b strings.Builder
	b.WriteString(classifierIntro)
	write := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		b.WriteString("\n\n" + title + "\n")
		for _, it := range items {
			b.WriteString("- " + it + "\n")
		}
	}
	write("Approve an action when one of these holds (and no deny rule below applies):", section(rules.Allow, classifierAllow))
	write("Deny these unless the user's request plainly asks for exactly this action:", section(rules.SoftDeny, classifierDeny))
	write("Always deny these, whatever the user's request says:", section(rules.HardDeny, ""))
	write("About the environment:", section(rules.Environment, ""))
	b.WriteString("\n" + classifierReply)
	return b.String()
}
