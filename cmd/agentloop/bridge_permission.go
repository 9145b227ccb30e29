package main

// The CLI→host bridges: the engine's permission callback, hook callbacks
// and in-process MCP servers, answered by the host that spawned agentloop
// (the official SDKs) through control requests on stdout (hostCaller).
// This file has the permission bridge and what the bridges share;
// bridge_hooks.go and bridge_mcp.go have the others.
//
// For the driver (h8): a hostCaller may also implement bridgeReporter;
// the bridges then hand it what they report (a host that failed or
// answered malformed, a member they do not honour), to become
// diagnostics of the session. Without it, reports go to standard error.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/wire"
	"github.com/agentloop/agentloop/settings"
)

// bridgeReporter is an optional interface of a hostCaller: it receives
// the bridges' problems, each with a diagnostic tag (agentloop's Diag*
// tags, or tagCanUseToolFailed). It may be called concurrently.
type bridgeReporter interface {
	bridgeReport(tag, text string)
}

// tagCanUseToolFailed tags a permission request the host did not answer
// usably.
const tagCanUseToolFailed = "can_use_tool_failed"

// report hands a problem of a bridge to h's reporter, or to standard
// error.
func report(h hostCaller, tag, text string) {
	if r, ok := h.(bridgeReporter); ok {
		r.bridgeReport(tag, text)
		return
	}
	fmt.Fprintf(os.Stderr, "agentloop: %s: %s\n", tag, text)
}

// reportOnce reports each distinct text once per bridge: an unhonoured
// member the host sends with every answer is said once, not per call.
type reportOnce struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (o *reportOnce) report(h hostCaller, tag, text string) {
	o.mu.Lock()
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	dup := o.seen[text]
	o.seen[text] = true
	o.mu.Unlock()
	if !dup {
		report(h, tag, text)
	}
}

// canUseToolBridge returns the permission callback of a session whose
// permission prompts go to the host (--permission-prompt-tool stdio):
// each call no rule, mode or hook decided becomes a can_use_tool request
// with the call's tool name, display name, description, input, id,
// suggestions, blocked path (one outside the working directories),
// decision reason and agent id, and the host's answer decides it:
//
//   - {behavior:"allow"} runs the call as asked; updatedInput, when
//     present, replaces the input (it is validated again);
//     updatedPermissions are applied (rules, mode, directories, in the
//     session or in settings files);
//   - {behavior:"deny", message, interrupt?} refuses it, telling the model
//     message; interrupt also ends the run.
//
// An error answer, a host that is gone, or an answer that is not one of
// those shapes (read strictly: unknown update types or members, a
// toolUseID of another call) denies the call with a message that says so,
// and is reported (tag tagCanUseToolFailed). When ctx ends first the
// callback returns ctx's error (the run is being cancelled). Members of
// the answer agentloop does not honour (decisionClassification, unknown
// ones) are reported once each.
func canUseToolBridge(h hostCaller) agentloop.CanUseTool {
	var once reportOnce
	return func(ctx context.Context, req agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
		body := wire.CanUseToolRequest{
			ToolName:       req.ToolName,
			Input:          req.Input,
			ToolUseID:      req.ToolUseID,
			BlockedPath:    req.BlockedPath,
			DecisionReason: req.DecisionReason,
			AgentID:        req.AgentID,
			DisplayName:    req.DisplayName,
			Description:    req.Description,
		}
		if len(bytes.TrimSpace(body.Input)) == 0 {
			body.Input = json.RawMessage(`{}`)
		}
		if len(req.Suggestions) > 0 {
			b, err := json.Marshal(req.Suggestions)
			if err != nil {
				return agentloop.PermissionResult{}, fmt.Errorf("can_use_tool: encoding the suggestions: %w", err)
			}
			body.PermissionSuggestions = b
		}
		raw, err := h.Call(ctx, "can_use_tool", &body)
		if err != nil {
			if ctx.Err() != nil {
				return agentloop.PermissionResult{}, fmt.Errorf("can_use_tool for %s: %w", req.ToolName, context.Cause(ctx))
			}
			var he *hostError
			what := "could not be asked"
			if errors.As(err, &he) {
				what = "was answered with an error"
			}
			text := fmt.Sprintf("The permission request for %s %s by the host, so the call was denied: %v", req.ToolName, what, err)
			report(h, tagCanUseToolFailed, text)
			return agentloop.Deny(text), nil
		}
		res, ignored, err := decodePermissionAnswer(raw, req.ToolUseID)
		if err != nil {
			text := fmt.Sprintf("The host's answer to the permission request for %s is malformed, so the call was denied: %v", req.ToolName, err)
			report(h, tagCanUseToolFailed, text)
			return agentloop.Deny(text), nil
		}
		for _, name := range ignored {
			once.report(h, agentloop.DiagOption, fmt.Sprintf("The host's permission answers carry %q, which agentloop does not honour.", name))
		}
		return res, nil
	}
}

// decodePermissionAnswer reads the host's answer to a can_use_tool
// request strictly. ignored names the members it carries that are not
// honoured.
func decodePermissionAnswer(raw json.RawMessage, toolUseID string) (res agentloop.PermissionResult, ignored []string, err error) {
	p, err := wire.DecodePermissionResult(raw)
	if err != nil {
		return res, nil, err
	}
	if p.ToolUseID != "" && toolUseID != "" && p.ToolUseID != toolUseID {
		return res, nil, fmt.Errorf("toolUseID is %q, not the asked call's %q", p.ToolUseID, toolUseID)
	}
	for name := range p.Extra {
		ignored = append(ignored, name)
	}
	if p.DecisionClassification != nil {
		ignored = append(ignored, "decisionClassification")
	}
	sort.Strings(ignored)
	res.Behavior = p.Behavior
	switch p.Behavior {
	case "allow":
		if p.Message != "" || p.Interrupt {
			return res, nil, errors.New("an allow carries message or interrupt, which belong to deny")
		}
		res.UpdatedInput = p.UpdatedInput
		ups, err := decodeUpdates(p.UpdatedPermissions)
		if err != nil {
			return res, nil, fmt.Errorf("updatedPermissions: %w", err)
		}
		res.UpdatedPermissions = ups
	case "deny":
		if p.UpdatedInput != nil || p.UpdatedPermissions != nil {
			return res, nil, errors.New("a deny carries updatedInput or updatedPermissions, which belong to allow")
		}
		res.Message, res.Interrupt = p.Message, p.Interrupt
	}
	return res, ignored, nil
}

// decodeUpdates reads permission updates strictly: an array of objects
// with only the members of settings.PermissionUpdate, of a known type.
// The session checks the rest (rules, mode, destination) as it applies
// them; a bad one denies the call.
func decodeUpdates(raw json.RawMessage) ([]settings.PermissionUpdate, error) {
	if len(raw) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var ups []settings.PermissionUpdate
	if err := dec.Decode(&ups); err != nil {
		return nil, err
	}
	for i, u := range ups {
		switch u.Type {
		case settings.AddRules, settings.ReplaceRules, settings.RemoveRules, settings.SetMode,
			settings.AddDirectories, settings.RemoveDirectories:
		default:
			return nil, fmt.Errorf("[%d]: unknown type %q (want %s)", i, u.Type,
				strings.Join([]string{"addRules", "replaceRules", "removeRules", "setMode", "addDirectories", "removeDirectories"}, ", "))
		}
		if u.Destination == "" {
			return nil, fmt.Errorf("[%d]: no destination", i)
		}
	}
	return ups, nil
}
