// Package taskline makes the system lines of the stream that tell a
// session's tasks (background shells, subagents): their fields as JSON and
// a fresh uuid each, and the run ids they carry.
package taskline

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/agentloop/agentloop/message"
)

// New is a system line of subtype about a session's tasks, with
// fields as its data. Each field must marshal to JSON (strings, numbers,
// booleans, maps and slices of them, structs with JSON tags).
func New(sessionID, subtype string, fields map[string]any) *message.System {
	data := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		b, err := json.Marshal(v)
		if err != nil {
			b, _ = json.Marshal(err.Error()) // not reached with the types above
		}
		data[k] = b
	}
	return &message.System{Subtype: subtype, SessionID: sessionID, UUID: uuid.NewString(), Data: data}
}

// NewRunID returns a fresh run id for a task line (run_id): the time in
// base 36 and random hex, the reference's form.
func NewRunID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "0" + strconv.FormatInt(time.Now().UnixMilli(), 36) + "-" + hex.EncodeToString(b[:])
}
