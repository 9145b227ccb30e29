// Command offline runs the agent loop end to end with no credentials and no
// network: a scripted fake of the Messages API (package agentlooptest) plays
// the model on loopback, and the real loop, tools and provider do the rest.
//
//	go run ./examples/offline
//
// The script has the model list the files of a scratch directory, read one
// with the Read tool, and answer. Every message of the stream is printed.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
)

func main() {
	dir, err := os.MkdirTemp("", "agentloop-offline")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("agentloop runs the agent loop in-process.\nIt is written in Go.\n"), 0o644); err != nil {
		log.Fatal(err)
	}

	srv, err := agentlooptest.Start(
		agentlooptest.Blocks(model.TextBlock("Let me look around first."),
			agentlooptest.ToolUseBlock("toolu_1", "Bash", map[string]any{"command": "ls"})),
		agentlooptest.ToolUse("toolu_2", "Read", map[string]any{"file_path": notes}),
		agentlooptest.Text("notes.txt says agentloop runs the agent loop in-process, in Go."),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	provider, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "offline"})
	if err != nil {
		log.Fatal(err)
	}

	// The example keeps no transcript: it would otherwise be written under
	// the user's ~/.claude on every run.
	opts := &agentloop.Options{Provider: provider, Cwd: dir, NoSessionPersistence: true}
	for msg, err := range agentloop.Query(context.Background(), "What do the notes in this directory say?", opts) {
		if err != nil {
			log.Fatal(err)
		}
		switch m := msg.(type) {
		case *agentloop.SystemMessage:
			if m.Init == nil {
				fmt.Printf("[%s]\n", m.Subtype)
				continue
			}
			fmt.Printf("[%s] session %s, model %s, tools %s\n", m.Subtype, m.SessionID, m.Init.Model, strings.Join(m.Init.Tools, ","))
		case *agentloop.AssistantMessage:
			for _, b := range m.Message.Content {
				switch b.Type {
				case "text":
					fmt.Printf("[assistant] %s\n", b.Text)
				case "tool_use":
					fmt.Printf("[assistant] calls %s %s\n", b.Name, b.Input)
				}
			}
		case *agentloop.UserMessage:
			for _, b := range m.Message.Content {
				fmt.Printf("[tool result] %s\n", indent(b.ResultText()))
			}
		case *agentloop.ResultMessage:
			fmt.Printf("[result] %s: %q\n         %d turns, %d requests, $%.6f (priced as %s)\n",
				m.Subtype, m.Text(), m.NumTurns, srv.Len(), m.TotalCostUSD, "claude-opus-5-5")
		}
	}
}

func indent(s string) string {
	return strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n              ")
}
