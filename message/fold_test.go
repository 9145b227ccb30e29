package message

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An assistant line names the folded user messages it answers in
// user_message_uuids, and leaves the key out when there are none; the
// field survives a round trip.
func TestAssistantUserMessageUUIDs(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []string
		want string // in the line; "" means the key is absent
	}{
		{name: "folded", ids: []string{"u1", "u2"}, want: `"user_message_uuids":["u1","u2"]`},
		{name: "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Assistant{Message: APIMessage{ID: "m", Type: "message", Role: "assistant"}, SessionID: "s", UUID: "a1",
				UserMessageUUIDs: tc.ids}
			b, err := a.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			line := string(b)
			if tc.want == "" && strings.Contains(line, "user_message_uuids") || !strings.Contains(line, tc.want) {
				t.Errorf("line %s, want %q", line, tc.want)
			}
			m, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := m.(*Assistant)
			if !ok {
				t.Fatalf("decoded %T", m)
			}
			if diff := cmp.Diff(tc.ids, got.UserMessageUUIDs); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}
