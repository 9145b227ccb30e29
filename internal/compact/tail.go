package compact

import (
	"fmt"

	"github.com/agentloop/agentloop/model"
)

// LastRound returns the index of the last assistant message of history:
// the start of the latest model round, which runs to the end (the reply,
// then the results of its tool calls, then any prompt after it). It
// returns len(history) when there is no assistant message.
func LastRound(history []model.Message) int {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == "assistant" {
			return i
		}
	}
	return len(history)
}

// SplitLast divides history as a compaction does: the latest model round
// ([LastRound]) is kept verbatim when its estimate is at most keep tokens
// and something older is left to summarise; otherwise everything is
// summarised, the last tool call and its result included, and kept is
// empty. A round opens with an assistant message and holds the results of
// its calls, so neither part has a tool_result without its tool_use.
func SplitLast(history []model.Message, keep int64) (older, kept []model.Message) {
	at := LastRound(history)
	if at == 0 || at >= len(history) || keep <= 0 || Estimate(history[at:]) > keep {
		return history, nil
	}
	return history[:at], history[at:]
}

// shrinkFloor is the least text a shortened block keeps, in bytes.
const shrinkFloor = 2_000

// Shrink returns msgs made to fit limit tokens by shortening their largest
// texts (tool results first, then other text blocks), each to its head
// and a note of how much was left out. It is for a summary request whose
// history cannot be cut any shorter ([Fit] keeps whole rounds): a tool
// result larger than the window on its own. msgs is not modified; the
// result may still be over limit when the texts are not what is large
// (images, say), and the API then refuses it.
func Shrink(msgs []model.Message, limit int64) []model.Message {
	if Estimate(msgs) <= limit {
		return msgs
	}
	out := make([]model.Message, len(msgs))
	copy(out, msgs)
	for range 64 { // each pass halves the excess or better; bounded anyway
		over := Estimate(out) - limit
		if over <= 0 {
			return out
		}
		i, k, sub, size := largestText(out)
		if i < 0 || size <= shrinkFloor {
			return out
		}
		cut := min(size-shrinkFloor, int(over)*4+256) // bytes to drop, a little more than the excess
		blocks := append([]model.Content(nil), out[i].Content...)
		if sub < 0 {
			blocks[k] = shortened(blocks[k], size-cut, kindOf(blocks[k]))
		} else { // a text inside a tool result given as blocks (an MCP result, say)
			inner := append([]model.Content(nil), blocks[k].Blocks...)
			inner[sub] = shortened(inner[sub], size-cut, "tool result")
			blocks[k].Blocks = inner
		}
		out[i] = model.Message{Role: out[i].Role, Content: blocks}
	}
	return out
}

// largestText finds the largest shortenable text of msgs: a tool_result's
// text (or a text block inside a tool_result given as blocks) or a text
// block, tool results winning a tie. It returns the message and block
// indexes, the index inside the block's Blocks (-1 for the block's own
// text) and the text's size; msg is -1 when there is none.
func largestText(msgs []model.Message) (msg, block, sub, size int) {
	msg, block, sub = -1, -1, -1
	for i, m := range msgs {
		for k, c := range m.Content {
			switch c.Type {
			case model.TypeToolResult:
				if n := len(c.Text); n > size {
					msg, block, sub, size = i, k, -1, n
				}
				for j, b := range c.Blocks {
					if n := len(b.Text); b.Type == model.TypeText && n > size {
						msg, block, sub, size = i, k, j, n
					}
				}
			case model.TypeText:
				if n := len(c.Text) - 1; n > size { // a tool result of the same size wins
					msg, block, sub, size = i, k, -1, n
				}
			}
		}
	}
	return msg, block, sub, size
}

// shortened returns c with its text cut to about keep bytes (on a UTF-8
// boundary) and a note of the size left out.
func shortened(c model.Content, keep int, kind string) model.Content {
	t := c.Text
	if keep >= len(t) {
		return c
	}
	for keep > 0 && keep < len(t) && t[keep]&0xC0 == 0x80 {
		keep--
	}
	c.Text = t[:keep] + fmt.Sprintf("\n[… %d more characters of this %s were left out of the summary request to fit the context window …]",
		len(t)-keep, kind)
	return c
}

func kindOf(c model.Content) string {
	if c.Type == model.TypeToolResult {
		return "tool result"
	}
	return "text"
}
