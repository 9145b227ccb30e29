package agentlooptest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/model"
)

// HistoryError is a messages request whose conversation the real Messages
// API rejects. The server answers it with a 400 invalid_request_error
// carrying Message, as the API does, and records it in
// [Server.Mismatches].
type HistoryError struct {
	// Request is the index of the request in [Server.Requests].
	Request int
	// Message is the API's error message, e.g. "messages.2: `tool_use` ids
	// were found without `tool_result` blocks immediately after: …".
	Message string
}

func (e *HistoryError) Error() string {
	return fmt.Sprintf("request %d (%s): the Messages API rejects this history: %s", e.Request, KindInvalid, e.Message)
}

// ValidateHistory checks a conversation by the rules the Messages API
// enforces on the order and pairing of messages, and returns an error whose
// text is the API's message for the first rule broken, or nil. The server
// applies it to every messages request unless [Server.Lenient] was called.
//
// The rules, in the order they are checked:
//
//  1. The first message has the role user.
//  2. No message is empty, except a final assistant message (a prefill).
//  3. No text block is empty.
//  4. Consecutive messages of the same role are accepted: the API combines
//     them into one turn, and the rules below apply to turns.
//  5. Every tool_use id is unique within the request.
//  6. A tool_result answers a tool_use of the assistant turn right before
//     its own turn; any other tool_use_id is unexpected.
//  7. Every tool_use of an assistant turn is answered in the next turn, by a
//     tool_result among the blocks that open it: a tool_result after a
//     text (or any other) block does not count. An assistant turn with
//     tool_use blocks that ends the conversation is unanswered too.
func ValidateHistory(msgs []model.Message) error {
	if len(msgs) == 0 {
		return nil // the body check reports a missing or empty list
	}
	// Rule 1: the API wants a user message first.
	if msgs[0].Role != "user" {
		return errors.New(`messages: first message must use the "user" role`)
	}
	for i, m := range msgs {
		// Rule 2: only a final assistant message may be empty.
		if len(m.Content) == 0 && !(i == len(msgs)-1 && m.Role == "assistant") {
			return fmt.Errorf("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		// Rule 3: empty text blocks are rejected wherever they are.
		for _, c := range m.Content {
			if c.Type == model.TypeText && c.Text == "" {
				return errors.New("messages: text content blocks must be non-empty")
			}
		}
	}
	seen := map[string]bool{} // every tool_use id so far (rule 5)
	var (
		prevUses  map[string]bool // tool_use ids of the assistant turn before this one
		prevOrder []string        // the same, in order
		prevAt    int             // index of the last message of that turn with a tool_use
	)
	// Rule 4: walk the conversation a turn (a run of one role) at a time.
	for i := 0; i < len(msgs); {
		j := i
		for j < len(msgs) && msgs[j].Role == msgs[i].Role {
			j++
		}
		if msgs[i].Role == "assistant" {
			uses, order, at := map[string]bool{}, []string(nil), -1
			for k := i; k < j; k++ {
				for n, c := range msgs[k].Content {
					if c.Type != model.TypeToolUse {
						continue
					}
					// Rule 5: a tool_use id may appear once per request.
					if seen[c.ID] {
						return fmt.Errorf("messages.%d.content.%d: `tool_use` ids must be unique", k, n)
					}
					seen[c.ID] = true
					uses[c.ID] = true
					order = append(order, c.ID)
					at = k
				}
			}
			// Rule 7, for the last turn: nothing answers its calls.
			if j == len(msgs) && len(order) > 0 {
				return missingResults(at, order)
			}
			prevUses, prevOrder, prevAt = uses, order, at
			i = j
			continue
		}
		leading := true
		answered := map[string]bool{}
		for k := i; k < j; k++ {
			for n, c := range msgs[k].Content {
				if c.Type != model.TypeToolResult {
					leading = false
					continue
				}
				// Rule 6: results only for calls of the previous turn.
				if !prevUses[c.ToolUseID] {
					return fmt.Errorf("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. "+
						"Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", k, n, c.ToolUseID)
				}
				if leading {
					answered[c.ToolUseID] = true
				}
			}
		}
		// Rule 7: every call of the previous turn answered up front.
		var missing []string
		for _, id := range prevOrder {
			if !answered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			return missingResults(prevAt, missing)
		}
		prevUses, prevOrder = nil, nil
		i = j
	}
	return nil
}

func missingResults(at int, ids []string) error {
	return fmt.Errorf("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. "+
		"Each `tool_use` block must have a corresponding `tool_result` block in the next message.", at, strings.Join(ids, ", "))
}
