package session_test

import (
	"fmt"
	"os"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
)

// A session is written while it runs, then loaded to be resumed.
func Example() {
	config, _ := os.MkdirTemp("", "config")
	defer os.RemoveAll(config)
	const id = "0f8fad5b-d9cb-469f-a165-70867728950e"
	cwd := "/home/me/proj"

	w, err := session.Create(session.Path(config, cwd, id), session.Envelope{SessionID: id, Cwd: cwd, Version: "agentloop 0.1.0"})
	if err != nil {
		panic(err)
	}
	w.Append(session.PromptEntry("", "What is 2+2?", "default"))
	w.Append(session.AssistantEntry(&message.Assistant{Message: message.APIMessage{
		ID: "msg_1", Role: "assistant", Model: "claude-x", Content: []model.Content{model.TextBlock("4")}}}))
	w.Append(session.LastPromptEntry("What is 2+2?", ""), session.CostStateEntry(session.CostState{TotalCostUSD: 0.01}))
	w.Close()

	// Later, perhaps in another process: resume.
	p, _ := session.Find(config, id)
	t, _ := session.Load(p)
	for _, m := range t.History() {
		fmt.Println(m.Role, m.Content[0].Text)
	}
	fmt.Println("cost so far:", t.Cost.TotalCostUSD)
	// Output:
	// user What is 2+2?
	// assistant 4
	// cost so far: 0.01
}
