package quickev

import (
	"encoding/json"
	"testing"
)

// TestFirstType: the type is read when it comes first and nothing else
// could be read as the type; otherwise the caller decodes. What it
// accepts, encoding/json reads alike.
func TestFirstType(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" when left to encoding/json
	}{
		{`{"type":"tool_use","id":"t","name":"Read","input":{"type":"x"}}`, "tool_use"},
		{`{"type":"text","text":"a \"type\": b"}`, "text"},
		{`{"type":"custom_block"}`, "custom_block"},
		{`{"type":"text" , "text" : "" } `, "text"},
		{`{"type":"text","Type":"tool_use"}`, ""},
		{`{"type":"text","TYPE":"tool_use"}`, ""},
		{`{"type":"text","typ\u0065":"tool_use"}`, ""},
		{`{"type":"te\"xt"}`, ""},
		{`{"type":""}`, ""},
		{`{"text":"","type":"text"}`, ""},
		{`{"type":"text"`, ""},
		{`{"type":"text"}x`, ""},
		{`{"type":"text",}`, ""},
	} {
		got, ok := FirstType([]byte(c.in))
		if got != c.want || ok != (c.want != "") {
			t.Errorf("FirstType(%s) = %q, %v; want %q", c.in, got, ok, c.want)
		}
		var head struct {
			Type string `json:"type"`
		}
		if ok && json.Unmarshal([]byte(c.in), &head) == nil && head.Type != got {
			t.Errorf("FirstType(%s) = %q; encoding/json reads %q", c.in, got, head.Type)
		}
	}
}
