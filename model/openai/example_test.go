package openai_test

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/model/openai"
)

// A run on a local model served by ollama: no key, every request of the
// loop goes to qwen3:8b.
func ExampleNew_ollama() {
	p, err := openai.New(&openai.Options{
		BaseURL: "http://localhost:11434/v1",
		Model:   "qwen3:8b",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	msgs, err := agentloop.Query(context.Background(), "How many Go files are in this directory?",
		&agentloop.Options{Provider: p}).Collect()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(msgs[len(msgs)-1].(*agentloop.ResultMessage).Text())
}

// The small model of the loop's side tasks mapped to a cheaper one, on
// OpenAI's Responses API.
func ExampleNew_modelMap() {
	p, err := openai.New(&openai.Options{
		API:      openai.APIResponses,
		Model:    "gpt-5",
		ModelMap: map[string]string{"claude-haiku-5-5": "gpt-5-mini"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.ModelFor("claude-haiku-5-5"), p.ModelFor("claude-opus-5-5"))
	// Output: gpt-5-mini gpt-5
}
