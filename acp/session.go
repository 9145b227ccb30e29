package acp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/model"
	sdk "github.com/coder/acp-go-sdk"
)

// session is one ACP session: an agentloop client and what the running
// prompt has announced.
type session struct {
	agent  *agent
	id     string
	cwd    string
	client *agentloop.Client

	// turn serialises prompts: a prompt that replaces a cancelled one
	// waits for it to end.
	turn sync.Mutex

	mu    sync.Mutex
	tools map[string]toolUse // announced tool calls by id
	// terminals are the editor terminals of running Bash calls, by call
	// id: the call's content shows the terminal, not its output text.
	terminals map[string]string
	// editorReads is set when the editor offers fs/read_text_file.
	editorReads bool
	plan        plan
	mode        agentloop.PermissionMode // the mode the editor was last told of
}

// syncMode tells the editor of a mode the loop changed (a permission
// update of "always allow", leaving plan mode), once.
func (s *session) syncMode(ctx context.Context) {
	m := s.client.PermissionMode()
	s.mu.Lock()
	changed := m != s.mode
	s.mode = m
	s.mu.Unlock()
	if changed {
		s.update(ctx, sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(m)}})
	}
}

// modeName returns the name the editor shows for a permission mode, ""
// for one it does not know.
func modeName(m agentloop.PermissionMode) string {
	switch m {
	case agentloop.PermissionDefault:
		return "Default"
	case agentloop.PermissionAcceptEdits:
		return "Accept Edits"
	case agentloop.PermissionPlan:
		return "Plan"
	case agentloop.PermissionDontAsk:
		return "Don't Ask"
	case agentloop.PermissionBypass:
		return "Bypass Permissions"
	case agentloop.PermissionAuto:
		return "Auto"
	}
	return ""
}

// modes returns the session's modes: the permission modes.
func (s *session) modes() *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(s.client.PermissionMode())}
	for _, m := range agentloop.PermissionModes() {
		name := modeName(m)
		if name == "" {
			name = string(m)
		}
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(m), Name: name})
	}
	return st
}

// models returns the session's models.
func (s *session) models() *sdk.SessionModelState {
	st := &sdk.SessionModelState{CurrentModelId: sdk.ModelId(s.client.Model()), AvailableModels: []sdk.ModelInfo{}}
	for _, m := range s.client.SupportedModels() {
		info := sdk.ModelInfo{ModelId: sdk.ModelId(m.Value), Name: m.DisplayName}
		if m.Description != "" {
			info.Description = sdk.Ptr(m.Description)
		}
		st.AvailableModels = append(st.AvailableModels, info)
	}
	return st
}

// update sends one session update. It is sent even after the prompt was
// cancelled, so that the editor sees the end of what ran.
func (s *session) update(ctx context.Context, u sdk.SessionUpdate) {
	err := s.agent.peer.SessionUpdate(context.WithoutCancel(ctx), sdk.SessionNotification{SessionId: sdk.SessionId(s.id), Update: u})
	if err != nil {
		s.agent.log.Warn("sending a session update", "session", s.id, "error", err)
	}
}

// prompt runs one query and streams its messages as updates.
func (s *session) prompt(ctx context.Context, blocks []sdk.ContentBlock) (sdk.PromptResponse, error) {
	content, err := promptContent(blocks)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	s.turn.Lock()
	defer s.turn.Unlock()
	if ctx.Err() != nil {
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	t := turn{s: s, streamed: map[string]bool{}}
	var (
		res     *agentloop.ResultMessage
		lastErr error
	)
	for m, err := range s.client.QueryContent(ctx, content) {
		if err != nil {
			lastErr = err
			continue
		}
		if r, ok := m.(*agentloop.ResultMessage); ok {
			res = r
		}
		t.handle(ctx, m)
	}
	switch {
	case ctx.Err() != nil:
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case errors.Is(lastErr, agentloop.ErrMaxTurns):
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests}, nil
	case res != nil && res.StopReason != nil && *res.StopReason == "max_tokens":
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTokens}, nil
	case res != nil && res.StopReason != nil && *res.StopReason == "refusal":
		return sdk.PromptResponse{StopReason: sdk.StopReasonRefusal}, nil
	case lastErr != nil:
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": lastErr.Error()})
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

// promptContent turns a prompt's blocks into the content of a query:
// text as is, an embedded text resource as a tagged text, a resource link
// as its URI (the texts in a row joined by newlines into one block, so
// that a prompt of text alone is one text block and "/name args" runs a
// command), an image as an image block (the agent advertises
// promptCapabilities.image). Audio and binary resources are refused (not
// advertised).
func promptContent(blocks []sdk.ContentBlock) ([]model.Content, error) {
	var out []model.Content
	var text []string
	flush := func() {
		if len(text) > 0 {
			out = append(out, model.TextBlock(strings.Join(text, "\n")))
			text = nil
		}
	}
	blank := true
	for i, c := range blocks {
		switch {
		case c.Text != nil:
			text = append(text, c.Text.Text)
			blank = blank && strings.TrimSpace(c.Text.Text) == ""
		case c.ResourceLink != nil:
			text = append(text, c.ResourceLink.Uri)
			blank = false
		case c.Resource != nil && c.Resource.Resource.TextResourceContents != nil:
			r := c.Resource.Resource.TextResourceContents
			text = append(text, fmt.Sprintf("<context ref=%q>\n%s\n</context>", r.Uri, r.Text))
			blank = false
		case c.Image != nil:
			img, err := imageBlock(c.Image)
			if err != nil {
				return nil, fmt.Errorf("prompt block %d: %w", i, err)
			}
			flush()
			out = append(out, img)
			blank = false
		default:
			return nil, fmt.Errorf("prompt block %d: only text, images, resource links and text resources are supported", i)
		}
	}
	flush()
	if blank {
		return nil, errors.New("the prompt is empty")
	}
	return out, nil
}

// imageMediaTypes are the image types the Messages API takes.
var imageMediaTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// imageBlock is the model's image block of an ACP image: its base64 data,
// else its http(s) URI.
func imageBlock(im *sdk.ContentBlockImage) (model.Content, error) {
	switch {
	case im.Data != "":
		if !slices.Contains(imageMediaTypes, im.MimeType) {
			return model.Content{}, fmt.Errorf("image of type %q: the model takes %s", im.MimeType, strings.Join(imageMediaTypes, ", "))
		}
		if _, err := base64.StdEncoding.DecodeString(im.Data); err != nil {
			return model.Content{}, fmt.Errorf("image data is not base64: %w", err)
		}
		return model.Content{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: im.MimeType, Data: im.Data}}, nil
	case im.Uri != nil && (strings.HasPrefix(*im.Uri, "https://") || strings.HasPrefix(*im.Uri, "http://")):
		return model.Content{Type: model.TypeImage, Source: &model.Source{Type: "url", URL: *im.Uri}}, nil
	}
	return model.Content{}, errors.New("an image needs base64 data or an http(s) URI")
}

// turn translates one query's messages into session updates.
type turn struct {
	s *session
	// streamed records the replies whose text came as deltas, so that
	// their final blocks are not sent twice.
	streamed map[string]bool
}

// handle sends the updates of one message.
func (t *turn) handle(ctx context.Context, m agentloop.Message) {
	switch m := m.(type) {
	case *agentloop.StreamEventMessage:
		if m.ParentToolUseID == nil {
			t.delta(ctx, m)
		}
	case *agentloop.AssistantMessage:
		for _, c := range m.Message.Content {
			switch c.Type {
			case "tool_use":
				t.s.startTool(ctx, c.ID, c.Name, c.Input)
			case "text":
				if m.ParentToolUseID == nil && !t.streamed[m.Message.ID] && c.Text != "" {
					t.s.update(ctx, sdk.UpdateAgentMessageText(c.Text))
				}
			case "thinking":
				if m.ParentToolUseID == nil && !t.streamed[m.Message.ID] && c.Thinking != "" {
					t.s.update(ctx, sdk.UpdateAgentThoughtText(c.Thinking))
				}
			}
		}
	case *agentloop.UserMessage:
		for _, c := range m.Message.Content {
			if c.Type == "tool_result" {
				t.s.endTool(ctx, c.ToolUseID, c.IsError != nil && *c.IsError, c.ResultText(), m.ToolUseResult)
			}
		}
		t.s.syncMode(ctx)
	case *agentloop.SystemMessage:
		if m.Subtype == agentloop.SubtypeCommandsChanged {
			t.s.advertiseCommands(ctx) // the editor's list is replaced
		}
	}
}

// delta sends a text or thinking delta of the main loop's reply.
func (t *turn) delta(ctx context.Context, m *agentloop.StreamEventMessage) {
	var ev struct {
		Type  string `json:"type"`
		Delta struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		} `json:"delta"`
	}
	if json.Unmarshal(m.Event, &ev) != nil || ev.Type != "content_block_delta" {
		return
	}
	switch ev.Delta.Type {
	case "text_delta":
		t.streamed[m.APIMessageID] = true
		if ev.Delta.Text != "" {
			t.s.update(ctx, sdk.UpdateAgentMessageText(ev.Delta.Text))
		}
	case "thinking_delta":
		t.streamed[m.APIMessageID] = true
		if ev.Delta.Thinking != "" {
			t.s.update(ctx, sdk.UpdateAgentThoughtText(ev.Delta.Thinking))
		}
	}
}
