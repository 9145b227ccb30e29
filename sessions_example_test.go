package agentloop_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/settings"
)

// This example runs one prompt, then finds the session among those of its
// directory and reads its conversation back.
func ExampleListSessions() {
	srv := agentlooptest.NewServer(agentlooptest.Text("Hello!"))
	defer srv.Close()
	provider, err := anthropic.New(&anthropic.Options{BaseURL: srv.URL, APIKey: "sk-test"})
	if err != nil {
		log.Fatal(err)
	}
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	configDir, _ := os.MkdirTemp("", "example-config")
	defer os.RemoveAll(configDir)

	ctx := context.Background()
	opts := &agentloop.Options{Provider: provider, Cwd: dir, ConfigDir: configDir,
		Tools: []string{}, SettingSources: []settings.SettingSource{}}
	if _, err := agentloop.Query(ctx, "Say hello", opts).Result(); err != nil {
		log.Fatal(err)
	}

	list, err := agentloop.ListSessions(ctx, dir, &agentloop.ListSessionsOptions{ConfigDir: configDir})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range list {
		fmt.Println("session:", s.Summary)
		msgs, err := agentloop.SessionMessages(ctx, s.SessionID, &agentloop.SessionMessagesOptions{ConfigDir: configDir})
		if err != nil {
			log.Fatal(err)
		}
		for _, m := range msgs {
			switch m := m.(type) {
			case *agentloop.UserMessage:
				fmt.Println("user:", m.Message.Content[0].Text)
			case *agentloop.AssistantMessage:
				fmt.Println("assistant:", m.Message.Text())
			}
		}
	}
	// Output:
	// session: Say hello
	// user: Say hello
	// assistant: Hello!
}
