package session

import (
	"strconv"

	"github.com/agentloop/agentloop/model"
)

// usageJSON is json.Marshal(u), written by hand: an assistant line is made
// deep in a turn's stack (under the loop's commit of a reply), where
// encoding/json's reflective encoder takes over a kilobyte of stack, which
// every session's goroutine would then keep.
func usageJSON(u *model.Usage) []byte {
	b := make([]byte, 0, 160)
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, u.InputTokens, 10)
	b = append(b, `,"output_tokens":`...)
	b = strconv.AppendInt(b, u.OutputTokens, 10)
	b = append(b, `,"cache_creation_input_tokens":`...)
	b = strconv.AppendInt(b, u.CacheCreationInputTokens, 10)
	b = append(b, `,"cache_read_input_tokens":`...)
	b = strconv.AppendInt(b, u.CacheReadInputTokens, 10)
	if c := u.CacheCreation; c != nil {
		b = append(b, `,"cache_creation":{"ephemeral_1h_input_tokens":`...)
		b = strconv.AppendInt(b, c.Ephemeral1hInputTokens, 10)
		b = append(b, `,"ephemeral_5m_input_tokens":`...)
		b = strconv.AppendInt(b, c.Ephemeral5mInputTokens, 10)
		b = append(b, '}')
	}
	if s := u.ServerToolUse; s != nil {
		b = append(b, `,"server_tool_use":{"web_search_requests":`...)
		b = strconv.AppendInt(b, s.WebSearchRequests, 10)
		b = append(b, `,"web_fetch_requests":`...)
		b = strconv.AppendInt(b, s.WebFetchRequests, 10)
		b = append(b, '}')
	}
	if u.ServiceTier != "" {
		b = append(b, `,"service_tier":`...)
		b = model.AppendString(b, u.ServiceTier)
	}
	if u.InferenceGeo != "" {
		b = append(b, `,"inference_geo":`...)
		b = model.AppendString(b, u.InferenceGeo)
	}
	return append(b, '}')
}
