package conversation_test

import (
	"context"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
)

// TestClearSessionIDConcurrentRead: Client.SessionID may be called while a
// /clear changes the id (the race detector checks it).
func TestClearSessionIDConcurrentRead(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("First."))
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), NoSessionPersistence: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Query(ctx, "Hello.").Result(); err != nil {
		t.Fatal(err)
	}
	old := c.SessionID()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = c.SessionID()
			}
		}
	}()
	_, err = c.Query(ctx, "/clear").Result()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if c.SessionID() == old {
		t.Error("/clear kept the session id")
	}
}
