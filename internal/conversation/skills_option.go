package conversation

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/internal/projectfiles"
)

// AllSkills, alone in Options.Skills, offers every skill found and allows
// the Skill tool, as the reference's skills: "all" does.
const AllSkills = "all"

// checkSkillsOption validates Options.Skills: names a Skill(name) rule
// can hold, and AllSkills only alone.
func checkSkillsOption(names []string) error {
	for _, n := range names {
		switch {
		case n == AllSkills && len(names) > 1:
			return fmt.Errorf("%w: Skills: %q must be the only entry", ErrInvalidOption, AllSkills)
		case n == "":
			return fmt.Errorf("%w: Skills: empty skill name", ErrInvalidOption)
		case strings.ContainsAny(n, "(),*\\") || strings.HasPrefix(n, "/") || strings.ContainsFunc(n, unicode.IsControl):
			return fmt.Errorf("%w: Skills: %q is not a skill name (no parentheses, commas, \"*\", backslashes, control characters or leading slash)", ErrInvalidOption, n)
		}
	}
	return nil
}

// offeredSkills are the skills offered to the model: all those found, or
// those Options.Skills names.
func (s *Session) offeredSkills() []projectfiles.Skill {
	f := s.opts.Skills
	if f == nil || slices.Equal(f, []string{AllSkills}) {
		return s.files.skills
	}
	var out []projectfiles.Skill
	for _, sk := range s.files.skills {
		if slices.Contains(f, sk.Name) {
			out = append(out, sk)
		}
	}
	return out
}

// applySkillsOption reports the names Options.Skills gives that no skill
// has, and grants the allow rules the reference's SDK adds for the
// option: Skill for AllSkills, Skill(name) for each name.
func (s *Session) applySkillsOption() {
	f := s.opts.Skills
	if f == nil {
		return
	}
	var rules []permission.RuleValue
	if slices.Equal(f, []string{AllSkills}) {
		rules = append(rules, permission.RuleValue{ToolName: "Skill"})
	} else {
		for _, n := range f {
			if _, ok := s.skill(n); !ok {
				s.diag.Add(DiagProjectFile, fmt.Sprintf("Options.Skills names %q, but no such skill is loaded", n))
			}
			rules = append(rules, permission.RuleValue{ToolName: "Skill", RuleContent: n})
		}
	}
	if len(rules) == 0 || s.checker == nil || s.policyGrantsOff("Options.Skills") {
		return
	}
	if err := s.checker.Apply(permission.Update{Type: permission.UpdateAddRules, Behavior: permission.Allow,
		Destination: permission.SourceCLI, Rules: rules}); err != nil {
		s.diag.Add(DiagProjectFile, fmt.Sprintf("Options.Skills: the Skill allow rules were not added: %v", err))
	}
}
