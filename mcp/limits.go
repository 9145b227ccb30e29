package mcp

import (
	"fmt"
	"unicode/utf8"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// A call's result is measured in estimated tokens, four characters of
// text each (image and other blocks are not counted). Above
// tool.MCPOutputWarnTokens the result is reported as large; above the
// server's cap (MCPServerConfig.MaxOutputTokens, default
// tool.DefaultMCPMaxOutputTokens) its text is cut to the cap and the model
// is told so. The loop may still save a long result to a file
// (tool.Info.MaxResultChars): the cap bounds what there is to save.

// charsPerToken is the estimate of characters per token.
const charsPerToken = 4

// estimateTokens is the estimated token count of a result's text.
func estimateTokens(r tool.Result) int {
	n := 0
	for _, c := range r.Content {
		if c.Type == model.TypeText {
			n += len(c.Text)
		}
	}
	return (n + charsPerToken - 1) / charsPerToken
}

// capped applies the server's output cap to the result of the call of
// toolName, and reports a result that is large or cut.
func (s *server) capped(toolName string, r tool.Result) tool.Result {
	limit := s.cfg.MaxOutputTokens
	if limit == 0 {
		limit = tool.DefaultMCPMaxOutputTokens
	}
	tokens := estimateTokens(r)
	cut := limit > 0 && tokens > limit
	switch {
	case cut:
		r = cutResult(r, limit, tokens)
		s.report(fmt.Sprintf("the result of %s had about %d tokens, over the limit of %d (MAX_MCP_OUTPUT_TOKENS); it was cut", toolName, tokens, limit))
	case tokens > tool.MCPOutputWarnTokens:
		s.report(fmt.Sprintf("the result of %s is large: about %d tokens (more than %d)", toolName, tokens, tool.MCPOutputWarnTokens))
	}
	return r
}

// cutResult keeps the first limit tokens of text of r: text blocks after
// the budget are dropped, the block that crosses it is cut at a character
// boundary, and a note for the model ends the last text kept.
func cutResult(r tool.Result, limit, tokens int) tool.Result {
	budget := limit * charsPerToken
	out := r
	out.Content = nil
	last := -1
	for _, c := range r.Content {
		if c.Type != model.TypeText {
			out.Content = append(out.Content, c)
			continue
		}
		if budget <= 0 {
			continue
		}
		if len(c.Text) > budget {
			i := budget
			for i > 0 && !utf8.RuneStart(c.Text[i]) {
				i--
			}
			c.Text = c.Text[:i]
		}
		budget -= len(c.Text)
		out.Content = append(out.Content, c)
		last = len(out.Content) - 1
	}
	note := fmt.Sprintf("\n\n[The tool's output was cut: it had about %d tokens, more than the limit of %d. Ask for less, for example with narrower arguments or paging, if you need the rest.]", tokens, limit)
	if last >= 0 {
		out.Content[last].Text += note
	} else {
		out.Content = append(out.Content, model.TextBlock(note[2:]))
	}
	return out
}
