package permission

import (
	"fmt"

	"github.com/agentloop/agentloop/internal/vocab"
)

// UpdateType is the kind of a permission update.
type UpdateType string

// The update kinds of the reference's PermissionUpdate.
const (
	UpdateAddRules          UpdateType = "addRules"
	UpdateReplaceRules      UpdateType = "replaceRules"
	UpdateRemoveRules       UpdateType = "removeRules"
	UpdateSetMode           UpdateType = "setMode"
	UpdateAddDirectories    UpdateType = "addDirectories"
	UpdateRemoveDirectories UpdateType = "removeDirectories"
)

// Update is the reference's PermissionUpdate, as it travels in
// permission_suggestions and in canUseTool's updatedPermissions. The
// destination is one of session, cliArg, userSettings, projectSettings and
// localSettings.
type Update struct {
	Type        UpdateType  `json:"type"`
	Rules       []RuleValue `json:"rules,omitempty"`
	Behavior    Behavior    `json:"behavior,omitempty"`
	Mode        Mode        `json:"mode,omitempty"`
	Directories []string    `json:"directories,omitempty"`
	Destination Source      `json:"destination"`
}

// Validate checks that the update is well formed.
func (u Update) Validate() error {
	switch u.Destination {
	case SourceSession, SourceCLI, SourceUser, SourceProject, SourceLocal:
	default:
		return fmt.Errorf("permission: update destination %q is not one of session, cliArg, userSettings, projectSettings, localSettings", u.Destination)
	}
	switch u.Type {
	case UpdateAddRules, UpdateReplaceRules, UpdateRemoveRules:
		if _, err := vocab.ParseBehavior(string(u.Behavior)); err != nil {
			return fmt.Errorf("permission: %s update: %w", u.Type, err)
		}
		for _, r := range u.Rules {
			if _, err := ParseRule(r.String()); err != nil {
				return err
			}
		}
	case UpdateSetMode:
		if _, err := vocab.ParsePermissionMode(string(u.Mode)); err != nil {
			return fmt.Errorf("permission: setMode update: %w", err)
		}
	case UpdateAddDirectories, UpdateRemoveDirectories:
		if len(u.Directories) == 0 {
			return fmt.Errorf("permission: %s update without directories", u.Type)
		}
	default:
		return fmt.Errorf("permission: unknown update type %q", u.Type)
	}
	return nil
}

// Apply applies a rule update (addRules, replaceRules, removeRules) to the
// destination's rules. Other update types do not concern a RuleSet and are
// ignored; Checker.Apply handles them.
func (rs *RuleSet) Apply(u Update) error {
	if err := u.Validate(); err != nil {
		return err
	}
	rules := make([]RuleValue, 0, len(u.Rules))
	for _, r := range u.Rules {
		v, _ := ParseRule(r.String()) // normalizes legacy names
		rules = append(rules, v)
	}
	switch u.Type {
	case UpdateAddRules:
		return rs.Add(u.Destination, u.Behavior, rules...)
	case UpdateReplaceRules:
		return rs.Replace(u.Destination, u.Behavior, rules...)
	case UpdateRemoveRules:
		return rs.Remove(u.Destination, u.Behavior, rules...)
	}
	return nil
}
