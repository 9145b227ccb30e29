package compact

import (
	"encoding/json"

	"github.com/agentloop/agentloop/model"
)

// Estimate is the estimated size of msgs in tokens: a quarter of the bytes
// of their JSON, and at least 1 for a non-empty list.
func Estimate(msgs []model.Message) int64 {
	if len(msgs) == 0 {
		return 0
	}
	var n int64
	for _, m := range msgs {
		n += messageBytes(m)
	}
	return max(n/4, 1)
}

// messageBytes is the size of m's JSON. A block that does not encode
// cannot be sent either; its text is counted, so the estimate errs on the
// large side.
func messageBytes(m model.Message) int64 {
	b, err := json.Marshal(m)
	if err == nil {
		return int64(len(b))
	}
	var n int64
	for _, c := range m.Content {
		n += int64(len(c.Text) + len(c.Input))
	}
	return n
}

// Due reports whether a request would pass threshold. base is the context
// the API reported for the latest reply (input, cache and output tokens of
// its usage; 0 when there is none), and added are the messages that
// entered the history after that reply (the whole history when there is no
// reply to count from), estimated with [Estimate]. A threshold ≤ 0 is never
// passed.
func Due(base int64, added []model.Message, threshold int64) bool {
	if threshold <= 0 {
		return false
	}
	return base+Estimate(added) > threshold
}
