package acp

import (
	"context"
	"errors"
	"strconv"

	"github.com/agentloop/agentloop"
	sessions "github.com/agentloop/agentloop/session"
	sdk "github.com/coder/acp-go-sdk"
)

// listPage is how many sessions one session/list page holds.
const listPage = 50

// ListSessions implements sdk.Agent: the stored sessions of the request's
// directory (every directory when it has none), newest first, in pages
// whose cursor is the offset of the next one.
func (a *agent) ListSessions(ctx context.Context, req sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	offset := 0
	if req.Cursor != nil {
		n, err := strconv.Atoi(*req.Cursor)
		if err != nil || n < 0 {
			return sdk.ListSessionsResponse{}, sdk.NewInvalidParams(map[string]any{"error": "invalid cursor " + strconv.Quote(*req.Cursor)})
		}
		offset = n
	}
	dir := ""
	if req.Cwd != nil {
		dir = *req.Cwd
	}
	l, err := agentloop.ListSessions(ctx, dir, &agentloop.ListSessionsOptions{ConfigDir: a.base.ConfigDir, Offset: offset, Limit: listPage + 1})
	if err != nil {
		return sdk.ListSessionsResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	resp := sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}
	if len(l) > listPage {
		l = l[:listPage]
		resp.NextCursor = sdk.Ptr(strconv.Itoa(offset + listPage))
	}
	for _, s := range l {
		info := sdk.SessionInfo{SessionId: sdk.SessionId(s.SessionID), Cwd: s.Cwd,
			UpdatedAt: sdk.Ptr(s.LastModified.UTC().Format("2006-01-02T15:04:05.000Z"))}
		if info.Cwd == "" {
			info.Cwd = dir
		}
		if s.Summary != "" {
			info.Title = sdk.Ptr(s.Summary)
		}
		resp.Sessions = append(resp.Sessions, info)
	}
	return resp, nil
}

// replay sends the stored conversation of session id as updates: prompts
// as user_message_chunk, replies as agent_message_chunk and
// agent_thought_chunk, tool calls as tool_call and their results as
// tool_call_update.
func (a *agent) replay(ctx context.Context, id, cwd string) error {
	msgs, err := agentloop.SessionMessages(ctx, id, &agentloop.SessionMessagesOptions{ConfigDir: a.base.ConfigDir})
	if errors.Is(err, sessions.ErrNotFound) {
		return sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	if err != nil {
		return sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	r := &session{agent: a, id: id, cwd: cwd, tools: map[string]toolUse{}}
	for _, m := range msgs {
		switch m := m.(type) {
		case *agentloop.UserMessage:
			for _, c := range m.Message.Content {
				switch c.Type {
				case "text":
					r.update(ctx, sdk.UpdateUserMessageText(c.Text))
				case "tool_result":
					r.endTool(ctx, c.ToolUseID, c.IsError != nil && *c.IsError, c.ResultText(), m.ToolUseResult)
				}
			}
		case *agentloop.AssistantMessage:
			for _, c := range m.Message.Content {
				switch c.Type {
				case "text":
					r.update(ctx, sdk.UpdateAgentMessageText(c.Text))
				case "thinking":
					r.update(ctx, sdk.UpdateAgentThoughtText(c.Thinking))
				case "tool_use":
					r.startTool(ctx, c.ID, c.Name, c.Input)
				}
			}
		}
	}
	return nil
}
