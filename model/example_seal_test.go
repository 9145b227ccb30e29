package model_test

import (
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/model"
)

// A large tool result sealed: it keeps no text, writes the same JSON, and
// reads back to the same text.
func ExampleSeal() {
	result := model.Content{Type: model.TypeToolResult, ToolUseID: "toolu_1", Text: strings.Repeat("1\tpackage main\n", 100)}
	sealed, ok := model.Seal(result)
	before, _ := result.AppendJSON(nil)
	after, _ := sealed.AppendJSON(nil)
	back, _ := model.Unseal(sealed)
	fmt.Println(ok, sealed.Sealed(), sealed.Text == "")
	fmt.Println(string(before) == string(after), back.Text == result.Text)
	// Output:
	// true true true
	// true true
}
