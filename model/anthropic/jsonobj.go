package anthropic

import (
	"encoding/json"
	"fmt"
)

// jsonObject is the top level of a JSON object, each member kept as the
// JSON it was: what the cloud platforms' middleware edits in a request
// body (moves the model into the URL, the API version and betas into the
// body).
type jsonObject map[string]json.RawMessage

// parseObject reads b as a JSON object; ok is false when b is not one.
func parseObject(b []byte) (o jsonObject, ok bool) {
	if err := json.Unmarshal(b, &o); err != nil || o == nil {
		return nil, false
	}
	return o, true
}

// str returns the member k when it is a string, else "".
func (o jsonObject) str(k string) string {
	var s string
	if json.Unmarshal(o[k], &s) != nil {
		return ""
	}
	return s
}

// truth reports whether the member k is true.
func (o jsonObject) truth(k string) bool {
	var b bool
	return json.Unmarshal(o[k], &b) == nil && b
}

// set sets the member k to v's JSON.
func (o jsonObject) set(k string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("setting %s: %w", k, err)
	}
	o[k] = b
	return nil
}

// bytes returns the object's JSON (members in the order of their names).
func (o jsonObject) bytes() ([]byte, error) { return json.Marshal(map[string]json.RawMessage(o)) }
