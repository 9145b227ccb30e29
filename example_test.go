package agentloop_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model/anthropic"
)

// This example runs a prompt against a scripted fake of the Messages API, so
// it needs no credentials: the model asks for one tool call, then answers.
// Against the real API, leave Options.Provider nil and set
// ANTHROPIC_API_KEY.
func ExampleQuery() {
	srv := agentlooptest.NewServer(
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo hello from the tool"}),
		agentlooptest.Text("The command printed a greeting."),
	)
	defer srv.Close()
	provider, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "sk-test"})
	if err != nil {
		log.Fatal(err)
	}
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	opts := &agentloop.Options{Provider: provider, Cwd: dir, Tools: []string{"Bash"}}
	for msg, err := range agentloop.Query(context.Background(), "Say hello with bash", opts) {
		if err != nil {
			log.Fatal(err)
		}
		switch m := msg.(type) {
		case *agentloop.AssistantMessage:
			for _, b := range m.Message.Content {
				if b.Type == "tool_use" {
					fmt.Printf("tool call: %s %s\n", b.Name, b.Input)
				} else {
					fmt.Println("assistant:", b.Text)
				}
			}
		case *agentloop.UserMessage:
			fmt.Println("tool result:", strings.TrimSpace(m.Message.Content[0].ResultText()))
		case *agentloop.ResultMessage:
			fmt.Printf("%s after %d turns\n", m.Subtype, m.NumTurns)
		}
	}
	// Output:
	// tool call: Bash {"command":"echo hello from the tool"}
	// tool result: hello from the tool
	// assistant: The command printed a greeting.
	// success after 2 turns
}

// A tool is a Go function whose input is a struct: the JSON schema the model
// sees is inferred from it, and the loop validates the model's input before
// the function runs.
func ExampleNewTool() {
	type weatherIn struct {
		City string `json:"city" jsonschema:"the city to report on"`
	}
	weather := agentloop.NewTool("weather", "Current weather for a city.",
		func(ctx context.Context, in weatherIn, call *agentloop.ToolCall) (agentloop.ToolResult, error) {
			return agentloop.TextResult("Sunny in " + in.City), nil
		}, &agentloop.ToolOptions{ReadOnly: true})

	srv := agentlooptest.NewServer(
		agentlooptest.ToolUse("toolu_1", "weather", map[string]any{"city": "Lisbon"}),
		agentlooptest.Text("It is sunny in Lisbon."),
	)
	defer srv.Close()
	provider, _ := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "sk-test"})

	res, err := agentloop.Query(context.Background(), "Weather in Lisbon?", &agentloop.Options{
		Provider: provider, Tools: []string{}, CustomTools: []agentloop.Tool{weather},
	}).Result()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	fmt.Println(string(weather.Info().InputSchema))
	// The tool result the model received:
	tr, _ := srv.Requests()[1].ToolResult("toolu_1")
	fmt.Println(tr.ResultText())
	// Output:
	// It is sunny in Lisbon.
	// {"type":"object","properties":{"city":{"type":"string","description":"the city to report on"}},"required":["city"],"additionalProperties":false}
	// Sunny in Lisbon
}
