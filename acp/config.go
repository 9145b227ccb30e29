package acp

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentloop/agentloop"
	sdk "github.com/coder/acp-go-sdk"
)

// A session's configuration options (session/set_config_option), the
// same settings as the mode and model methods plus the effort:
//
//   - "mode" (category mode): the permission mode, as session/set_mode;
//   - "model" (category model): the model, as session/set_model; the
//     values are the aliases of SupportedModels, and the current model
//     when it is none of them;
//   - "effort" (category thought_level): the effort, "auto" for the
//     model's default.
//
// Every answer and every new, loaded or resumed session carries the
// options with their current values.

// Config option ids.
const (
	configMode   = "mode"
	configModel  = "model"
	configEffort = "effort"
)

// autoEffort is the effort value that leaves the effort to the model.
const autoEffort = "auto"

// configOptions are the session's options with their current values.
func (s *session) configOptions() []sdk.SessionConfigOption {
	sel := func(id, name string, cat sdk.SessionConfigOptionCategory, cur string, opts []sdk.SessionConfigSelectOption) sdk.SessionConfigOption {
		u := sdk.SessionConfigSelectOptionsUngrouped(opts)
		return sdk.SessionConfigOption{Select: &sdk.SessionConfigOptionSelect{Id: sdk.SessionConfigId(id), Name: name,
			Category: &cat, CurrentValue: sdk.SessionConfigValueId(cur), Type: "select",
			Options: sdk.SessionConfigSelectOptions{Ungrouped: &u}}}
	}
	var modes []sdk.SessionConfigSelectOption
	for _, m := range s.modes().AvailableModes {
		modes = append(modes, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.Id), Name: m.Name})
	}
	cur := s.client.Model()
	curValue := cur
	var models []sdk.SessionConfigSelectOption
	for _, m := range s.client.SupportedModels() {
		models = append(models, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.Value), Name: m.DisplayName})
		if m.ResolvedModel == cur {
			curValue = m.Value
		}
	}
	if curValue == cur {
		models = append(models, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(cur), Name: cur})
	}
	effort := s.client.Effort()
	if effort == "" {
		effort = autoEffort
	}
	efforts := []sdk.SessionConfigSelectOption{{Value: autoEffort, Name: "Auto"}}
	for _, e := range agentloop.Efforts() {
		efforts = append(efforts, sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(e), Name: e})
	}
	return []sdk.SessionConfigOption{
		sel(configMode, "Mode", sdk.SessionConfigOptionCategoryMode, string(s.client.PermissionMode()), modes),
		sel(configModel, "Model", sdk.SessionConfigOptionCategoryModel, curValue, models),
		sel(configEffort, "Effort", sdk.SessionConfigOptionCategoryThoughtLevel, effort, efforts),
	}
}

// setConfigOption sets one option to value.
func (s *session) setConfigOption(id, value string) error {
	switch id {
	case configMode:
		mode, err := agentloop.ParsePermissionMode(value)
		if err != nil {
			return err
		}
		if err := s.client.SetPermissionMode(mode); err != nil {
			return err
		}
		s.mu.Lock()
		s.mode = s.client.PermissionMode()
		s.mu.Unlock()
		return nil
	case configModel:
		return s.client.SetModel(value)
	case configEffort:
		if value == autoEffort {
			value = ""
		} else if !slices.Contains(agentloop.Efforts(), value) {
			return fmt.Errorf("effort %q is not one of auto, %v", value, agentloop.Efforts())
		}
		return s.client.SetEffort(value)
	}
	return fmt.Errorf("no config option %q (the options are %s, %s and %s)", id, configMode, configModel, configEffort)
}

// SetSessionConfigOption implements sdk.Agent: it sets the mode, the
// model or the effort, and answers with every option's current value.
func (a *agent) SetSessionConfigOption(_ context.Context, req sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	if req.ValueId == nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{
			"error": "agentloop's config options are selects: send a value id"})
	}
	s, err := a.session(req.ValueId.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	if err := s.setConfigOption(string(req.ValueId.ConfigId), string(req.ValueId.Value)); err != nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions()}, nil
}
