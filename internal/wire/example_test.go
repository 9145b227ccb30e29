package wire_test

import (
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/internal/wire"
)

// The engine's read loop: each line is a message, an error about that
// line, or the end. A request of a subtype the engine does not handle is
// answered as unsupported.
func ExampleReader() {
	in := strings.NewReader(`{"type":"control_request","request_id":"a1","request":{"subtype":"get_plan"}}
{"type":"user","message":{"role":"user","content":"hello"},"parent_tool_use_id":null,"session_id":""}
{"type":"user","message":{"role":"assistant","content":"hi"}}
`)
	r := wire.NewReader(in, 0)
	for {
		m, err := r.Next()
		if err != nil {
			if le, ok := err.(*wire.LineError); ok {
				fmt.Println(le)
				continue
			}
			break // io.EOF
		}
		switch m := m.(type) {
		case *wire.ControlRequest:
			answer, _ := wire.Encode(wire.Unsupported(m.RequestID, m.Request.Subtype()))
			fmt.Print(string(answer))
		case *wire.User:
			fmt.Println("prompt:", m.Message.Content[0].Text)
		}
	}
	// Output:
	// {"response":{"error":"Unsupported control request subtype: get_plan","error_code":"unsupported_request","request_id":"a1","subtype":"error"},"type":"control_response"}
	// prompt: hello
	// wire: line 3: user: message.role: want "user", got "assistant"
}
