package compact

import "github.com/agentloop/agentloop/model"

// CutPoints returns the indexes i of history at which it may be cut, the
// part kept being history[i:]: those where history[i] is an assistant
// message, or a user message with no tool_result block. Cutting anywhere
// else would leave a tool_result without its tool_use.
func CutPoints(history []model.Message) []int {
	var out []int
	for i, m := range history {
		if canStartAt(m) {
			out = append(out, i)
		}
	}
	return out
}

func canStartAt(m model.Message) bool {
	if m.Role != "user" {
		return true
	}
	for _, c := range m.Content {
		if c.Type == model.TypeToolResult {
			return false
		}
	}
	return true
}

// Fit returns the longest tail of history, starting at a cut point, whose
// estimate is at most limit tokens; the whole history when it fits. When
// no tail fits, it returns the shortest tail that starts at a cut point
// (the caller's request may then be refused by the API, which is reported
// as the compaction's failure).
func Fit(history []model.Message, limit int64) []model.Message {
	suffix := make([]int64, len(history)+1) // suffix[i]: bytes of history[i:]
	for i := len(history) - 1; i >= 0; i-- {
		suffix[i] = suffix[i+1] + messageBytes(history[i])
	}
	if suffix[0]/4 <= limit {
		return history
	}
	points := CutPoints(history)
	for _, i := range points {
		if i > 0 && suffix[i]/4 <= limit {
			return history[i:]
		}
	}
	if n := len(points); n > 0 {
		return history[points[n-1]:]
	}
	return history
}

// Compacted builds the history that replaces a compacted one: one user
// message with head (the summary message, then the opening context),
// followed by kept. A kept part that starts with a user message is merged
// into that first message, so roles still alternate.
func Compacted(head []model.Content, kept []model.Message) []model.Message {
	first := model.Message{Role: "user", Content: append([]model.Content(nil), head...)}
	out := []model.Message{first}
	for i, m := range kept {
		if i == 0 && m.Role == "user" {
			out[0].Content = append(out[0].Content, m.Content...)
			continue
		}
		out = append(out, m)
	}
	return out
}
