package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/wire"
	"github.com/agentloop/agentloop/model/anthropic"
)

// control answers one of the host's control requests. Requests are
// answered in the order they come; interrupt waits (while ctx allows)
// until the interrupted turn's result is out.
func (d *streamDriver) control(ctx context.Context, r *wire.ControlRequest) {
	var (
		payload any
		err     error
	)
	switch q := r.Request.(type) {
	case *wire.InitializeRequest:
		text := "the session is already initialized"
		if d.noInit {
			text = "initialize must be the first line: the session started without it"
		}
		_ = d.out.wire(wire.Failure(r.RequestID, text, ""))
		return
	case *wire.InterruptRequest:
		d.interrupt(ctx, r.RequestID, q)
		return
	case *wire.SetPermissionModeRequest:
		if q.AnswersBypassSwitchBack != nil {
			d.warnOnce("answers_bypass_switch_back", "set_permission_mode: answers_bypass_switch_back is ignored")
		}
		if err = d.client.SetPermissionMode(agentloop.PermissionMode(q.Mode)); err == nil {
			payload = wire.SetPermissionModeResponse{Mode: string(d.client.PermissionMode())}
		}
	case *wire.SetModelRequest:
		name := "default"
		if q.Model != nil && *q.Model != "" {
			name = *q.Model
		}
		target := name
		if name == "default" {
			target = d.initModel
		}
		if err = d.client.SetModel(target); err == nil {
			payload = map[string]string{"model": name}
		}
	case *wire.SetMaxThinkingTokensRequest:
		if q.ThinkingDisplay != "" {
			d.warnOnce("thinking_display", "set_max_thinking_tokens: thinking_display is ignored")
		}
		n := 0
		if q.MaxThinkingTokens != nil {
			n = *q.MaxThinkingTokens
		}
		err = d.client.SetMaxThinkingTokens(n)
	case *wire.MCPStatusRequest:
		st := d.client.MCPStatus()
		if st == nil {
			st = []agentloop.MCPServerStatus{}
		}
		payload = map[string]any{"mcpServers": st}
	case *wire.MCPReconnectRequest:
		// Connecting may need the host (its in-process servers): the
		// answer is written apart, and stdin is read meanwhile.
		d.bg.Go(func() { d.reply(r.RequestID, nil, d.client.ReconnectMCPServer(ctx, q.ServerName)) })
		return
	case *wire.MCPToggleRequest:
		d.bg.Go(func() { d.reply(r.RequestID, nil, d.client.ToggleMCPServer(ctx, q.ServerName, *q.Enabled)) })
		return
	case *wire.GetContextUsageRequest:
		if !d.client.Idle() {
			// During a turn (or as one ends) the client measures the
			// request of the turn's latest model call; stdin is read
			// meanwhile, so an interrupt is not held up.
			d.bg.Go(func() {
				u, err := d.client.ContextUsage(ctx)
				d.reply(r.RequestID, u, err)
			})
			return
		}
		err = d.betweenTurns(ctx, func() (err error) {
			payload, err = d.client.ContextUsage(ctx)
			return err
		})
	case *wire.RewindFilesRequest:
		payload, err = d.client.RewindFiles(ctx, q.UserMessageID, &agentloop.RewindOptions{DryRun: q.DryRun != nil && *q.DryRun})
	case *wire.MCPMessageRequest:
		// A message the host's server started (tools/list_changed, a
		// ping): the engine's client may call the host back while it
		// handles it, so it is answered apart.
		d.mcpMu.Lock()
		servers := d.sdkMCP
		d.mcpMu.Unlock()
		d.bg.Go(func() {
			resp, err := deliverHostMCP(ctx, servers, q.ServerName, q.Message)
			d.reply(r.RequestID, map[string]json.RawMessage{"mcp_response": resp}, err)
		})
		return
	case *wire.OtherRequest:
		if q.Name != "cancel_async_message" {
			_ = d.out.wire(wire.Unsupported(r.RequestID, q.Name))
			return
		}
		var body struct {
			MessageUUID string `json:"message_uuid"`
		}
		if raw, ok := q.Fields["message_uuid"]; !ok || json.Unmarshal(raw, &body.MessageUUID) != nil || body.MessageUUID == "" {
			_ = d.out.wire(wire.Failure(r.RequestID, "cancel_async_message: message_uuid is missing or not a string", ""))
			return
		}
		var withdrawn bool
		d.replay.withdraw(func() []string {
			if withdrawn = d.client.Withdraw(body.MessageUUID); withdrawn {
				return []string{body.MessageUUID}
			}
			return nil
		})
		payload = map[string]bool{"cancelled": withdrawn}
	default:
		_ = d.out.wire(wire.Unsupported(r.RequestID, r.Request.Subtype()))
		return
	}
	d.reply(r.RequestID, payload, err)
}

// reply answers request id: with payload, or with err when not nil.
func (d *streamDriver) reply(id string, payload any, err error) {
	if err != nil {
		_ = d.out.wire(wire.Failure(id, strings.TrimPrefix(err.Error(), "agentloop: "), ""))
		return
	}
	ans, err := wire.Success(id, payload)
	if err != nil {
		ans = wire.Failure(id, err.Error(), "")
	}
	_ = d.out.wire(ans)
}

// interrupt stops the running turn at once and answers before the turn
// ends, as the reference does: the pending permission requests are
// withdrawn (control_cancel_request), then comes the answer
// (still_queued), then the interrupted turn's partial reply, its marker
// and its result. The output is held while the turn is
// cancelled and the answer written, so no line of the turn comes first.
func (d *streamDriver) interrupt(ctx context.Context, id string, q *wire.InterruptRequest) {
	d.out.mu.Lock()
	defer d.out.mu.Unlock()
	var (
		res agentloop.InterruptResult
		err error
	)
	d.replay.withdraw(func() []string { // the cancelled never ran: never echoed
		res, err = d.client.Interrupt(canceledContext(), &agentloop.InterruptOptions{CancelQueued: q.CancelQueued != nil && *q.CancelQueued})
		return res.Cancelled
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		b, _ := wire.Encode(wire.Failure(id, strings.TrimPrefix(err.Error(), "agentloop: "), ""))
		_ = d.out.lineLocked(b)
		return
	}
	// The permission requests the turn was waiting on are withdrawn
	// first, as the reference does.
	d.host.withdrawLocked("can_use_tool")
	ans, err := wire.Success(id, wire.InterruptResponse{StillQueued: orEmpty(d.hostGiven(res.StillQueued)), Cancelled: res.Cancelled})
	if err != nil {
		ans = wire.Failure(id, err.Error(), "")
	}
	if b, err := wire.Encode(ans); err == nil {
		_ = d.out.lineLocked(b)
	}
}

// hostGiven keeps the uuids the host gave its messages: a message sent
// without one is not listed in still_queued, as the reference lists none
// (recorded: a prompt queued without a uuid, then an interrupt, answered
// still_queued: []). It still runs after the interrupted turn.
func (d *streamDriver) hostGiven(ids []string) []string {
	var out []string
	for _, id := range ids {
		if _, ok := d.hostIDs.Load(id); ok {
			out = append(out, id)
		}
	}
	return out
}

// orEmpty makes a nil list an empty one, for JSON's [].
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// options builds the session's options: the command line's, then what
// initialize (if any) delivers, which wins where both say something.
func (d *streamDriver) options(init *wire.ControlRequest) (*agentloop.Options, error) {
	o, err := d.c.options()
	if err != nil {
		return nil, err
	}
	if err := d.c.checkResume(); err != nil { // startup.go
		return nil, err
	}
	o.Logger = d.logger
	if d.c.sdk.permissionPromptTool == "stdio" {
		o.CanUseTool = canUseToolBridge(d.host)
	}
	if init == nil {
		if len(d.c.mcp.sdk) > 0 {
			if err := d.bridgeSDKMCP(o, d.c.mcp.sdk, nil); err != nil {
				return nil, err
			}
		}
		return o, nil
	}
	q := init.Request.(*wire.InitializeRequest)
	if q.SystemPrompt != nil {
		var parts []string
		for _, p := range q.SystemPrompt {
			if strings.TrimSpace(p) != "" {
				parts = append(parts, p)
			}
		}
		o.SystemPrompt = strings.Join(parts, "\n\n")
		if o.SystemPrompt == "" && o.Agent == "" {
			// With --agent, the agent's prompt stands in for the
			// SDK's empty one.
			o.SystemPrompt = sdkMinimalPrompt
		}
	}
	if q.AppendSystemPrompt != "" {
		o.AppendSystemPrompt = q.AppendSystemPrompt
	}
	if q.ExcludeDynamicSections != nil {
		o.ExcludeDynamicSystemPrompt = *q.ExcludeDynamicSections
	}
	if q.Skills != nil {
		o.Skills = q.Skills
	}
	if q.Title != "" {
		// The session records it and announces it with
		// system/session_title_changed after its first init.
		o.Title = q.Title
	}
	if q.ForwardSubagentText != nil {
		o.ForwardSubagentText = *q.ForwardSubagentText
	}
	if q.JSONSchema != nil {
		o.OutputFormat = &agentloop.OutputFormat{Type: "json_schema", Schema: q.JSONSchema}
	}
	if len(q.Agents) > 0 {
		b, err := json.Marshal(q.Agents)
		if err != nil {
			return nil, fmt.Errorf("initialize: agents: %w", err)
		}
		agents, warnings, err := parseAgents(string(b))
		if err != nil {
			return nil, fmt.Errorf("initialize: agents: %w", err)
		}
		for _, w := range warnings {
			d.warn(strings.Replace(w, "--agents:", "initialize agents:", 1))
		}
		if o.Agents == nil {
			o.Agents = map[string]agentloop.AgentDefinition{}
		}
		maps.Copy(o.Agents, agents)
	}
	if len(q.Hooks) > 0 {
		h, err := hookBridge(d.host, q.Hooks)
		if err != nil {
			return nil, fmt.Errorf("initialize: hooks: %w", err)
		}
		if o.Hooks == nil {
			o.Hooks = h
		} else {
			for ev, ms := range h {
				o.Hooks[ev] = append(o.Hooks[ev], ms...)
			}
		}
	}
	servers := map[string]agentloop.MCPServerConfig{}
	maps.Copy(servers, o.MCPServers)
	if names := sdkServerNames(d.c.mcp.sdk, q.SDKMCPServers); len(names) > 0 {
		s, err := sdkMCPBridge(d.host, names, q.SDKMCPServerManifests)
		if err != nil {
			return nil, fmt.Errorf("initialize: sdkMcpServers: %w", err)
		}
		maps.Copy(servers, s)
		d.mcpMu.Lock()
		d.sdkMCP = s
		d.mcpMu.Unlock()
	}
	if q.MCPServers != nil {
		b, err := json.Marshal(map[string]any{"mcpServers": q.MCPServers})
		if err != nil {
			return nil, fmt.Errorf("initialize: mcpServers: %w", err)
		}
		s, err := agentloop.ParseMCPConfig(b)
		if err != nil {
			return nil, fmt.Errorf("initialize: mcpServers: %w", err)
		}
		maps.Copy(servers, s)
	}
	if len(servers) > 0 {
		o.MCPServers = servers
	}
	if q.Settings != nil {
		s := string(q.Settings)
		var path string
		if json.Unmarshal(q.Settings, &path) == nil {
			s = path // a settings file
		}
		if o.Settings != "" {
			d.warn("the settings of initialize replace those of --settings")
		}
		o.Settings = s
	}
	o.DisallowedTools = append(o.DisallowedTools, q.DisallowedTools...)
	plugins, err := initPlugins(q.Plugins)
	if err != nil {
		return nil, err
	}
	o.Plugins = append(o.Plugins, plugins...)
	d.warnUnhonoured(q)
	return o, nil
}

// initPlugins reads initialize's plugins, [{type: "local", path,
// skipMcpDiscovery?}] (the SDKs' pluginDelivery "initialize"). The
// plugins themselves are checked when the session starts.
func initPlugins(raw json.RawMessage) ([]agentloop.PluginConfig, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []struct {
		Type             string `json:"type"`
		Path             string `json:"path"`
		SkipMCPDiscovery bool   `json:"skipMcpDiscovery"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("initialize: plugins: %w", err)
	}
	var out []agentloop.PluginConfig
	for i, p := range list {
		switch {
		case p.Type != "local":
			return nil, fmt.Errorf("initialize: plugins[%d]: type %q is not supported (only local)", i, p.Type)
		case p.Path == "":
			return nil, fmt.Errorf("initialize: plugins[%d]: no path", i)
		}
		out = append(out, agentloop.PluginConfig{Path: p.Path, SkipMCP: p.SkipMCPDiscovery})
	}
	return out, nil
}

// warnUnhonoured warns about the initialize fields the session does not
// honour.
func (d *streamDriver) warnUnhonoured(q *wire.InitializeRequest) {
	var names []string
	add := func(set bool, name string) {
		if set {
			names = append(names, name)
		}
	}
	isTrue := func(b *bool) bool { return b != nil && *b }
	add(q.SystemPromptSnapshot != nil, "systemPromptSnapshot")
	add(q.PlanModeInstructions != "", "planModeInstructions")
	add(isTrue(q.PromptSuggestions), "promptSuggestions")
	add(isTrue(q.AgentProgressSummaries), "agentProgressSummaries")
	add(q.SDKMCPServerConfigs != nil, "sdkMcpServerConfigs")
	add(q.ManagedSettings != nil, "managedSettings (managed_settings_applied is false)")
	names = append(names, slices.Sorted(maps.Keys(q.Extra))...)
	for _, n := range names {
		d.warn("initialize: " + n + " is ignored")
	}
}

// answerInitialize answers initialize with what the session offers and
// which initialize-delivered fields it applied (wire-protocol.md §9).
func (d *streamDriver) answerInitialize(r *wire.ControlRequest, o *agentloop.Options) {
	q := r.Request.(*wire.InitializeRequest)
	yes, no := true, false
	resp := wire.InitializeResponse{
		Commands:              []wire.Command{},
		Agents:                []wire.AgentInfo{},
		OutputStyle:           "default",
		AvailableOutputStyles: []string{"default"},
		Models:                []wire.ModelInfo{},
		Account:               wire.Account{TokenSource: "none", APIKeySource: apiKeySource(), APIProvider: anthropic.EnvPlatform()},
		PID:                   os.Getpid(),
		Version:               agentloop.Version,
		CurrentPermissionMode: string(d.client.PermissionMode()),
		// hookBridge honours onFailure (continue or block).
		HookOnFailureSupported: true,
	}
	for _, c := range d.client.SupportedCommands() {
		resp.Commands = append(resp.Commands, wire.Command{Name: c.Name, Description: c.Description, ArgumentHint: c.ArgumentHint,
			Aliases: c.Aliases, Builtin: c.Builtin})
	}
	for _, a := range d.client.SupportedAgents() {
		resp.Agents = append(resp.Agents, wire.AgentInfo{Name: a.Name, Description: a.Description, Model: a.Model})
	}
	for _, m := range d.client.SupportedModels() {
		resp.Models = append(resp.Models, wire.ModelInfo{Value: m.Value, DisplayName: m.DisplayName, Description: m.Description})
	}
	if len(q.Hooks) > 0 {
		resp.HooksApplied = &yes
	}
	if q.Settings != nil {
		resp.SettingsApplied = &yes
	}
	if q.DisallowedTools != nil {
		resp.DisallowedToolsApplied = &yes
	}
	if q.MCPServers != nil {
		resp.MCPServersApplied = &yes
	}
	if q.ManagedSettings != nil {
		resp.ManagedSettingsApplied = &no
	}
	if q.Plugins != nil {
		resp.PluginsApplied = &yes // initPlugins
	}
	ans, err := wire.Success(r.RequestID, resp)
	if err != nil {
		_ = d.out.wire(wire.Failure(r.RequestID, err.Error(), ""))
		return
	}
	_ = d.out.wire(ans)
}

// apiKeySource names where the credentials come from, as the reference's
// account.apiKeySource does.
func apiKeySource() string {
	switch {
	case anthropic.EnvPlatform() != anthropic.PlatformAnthropic:
		return "none" // the cloud's own credentials
	case os.Getenv("ANTHROPIC_API_KEY") != "":
		return "ANTHROPIC_API_KEY"
	case os.Getenv("ANTHROPIC_AUTH_TOKEN") != "":
		return "ANTHROPIC_AUTH_TOKEN"
	}
	return "none"
}
