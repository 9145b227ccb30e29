package conversation

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
)

// The queue of streaming input, without a session: priorities order it,
// a turn waits for the next message without spinning, a PriorityNow
// message interrupts the running turn, and the end of the stream's
// context ends the wait.
func TestInboxQueueSemantics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &Client{}
		send := func(text, prio string) {
			t.Helper()
			if _, err := c.Send(UserInput{Text: text, UUID: text, Priority: prio}); err != nil {
				t.Fatal(err)
			}
		}
		send("later-1", PriorityLater)
		send("next-1", "")
		send("now-1", PriorityNow)
		send("next-2", PriorityNext)
		send("later-2", PriorityLater)
		send("now-2", PriorityNow)
		want := []string{"now-1", "now-2", "next-1", "next-2", "later-1", "later-2"}
		if diff := cmp.Diff(want, c.Queued()); diff != "" {
			t.Fatalf("queue (-want +got):\n%s", diff)
		}

		ctx, cancel := context.WithCancel(t.Context())
		got := make(chan string, 10)
		turns := make(chan context.Context, 10)
		hold := make(chan struct{})
		go func() {
			defer close(got)
			for {
				m, tctx, tr, ok := c.in.next(ctx)
				if !ok {
					return
				}
				got <- m.id
				if m.id == "held" {
					turns <- tctx
					<-tctx.Done()
					<-hold
				}
				c.in.end(tr)
			}
		}()
		synctest.Wait() // the queue is drained and the consumer waits
		// Sent while no turn ran, each runs alone (batch).
		wantRun := want
		var order []string
		for range len(wantRun) {
			order = append(order, <-got)
		}
		if diff := cmp.Diff(wantRun, order); diff != "" {
			t.Errorf("run order (-want +got):\n%s", diff)
		}
		select {
		case id := <-got:
			t.Fatalf("ran %q from an empty queue", id)
		default:
		}

		send("held", "")
		tctx := <-turns
		send("after", PriorityNext) // waits; does not interrupt
		synctest.Wait()
		if tctx.Err() != nil {
			t.Fatal("a next message interrupted the running turn")
		}
		send("urgent", PriorityNow)
		synctest.Wait()
		if !errors.Is(context.Cause(tctx), ErrInterrupted) {
			t.Fatalf("running turn's cause = %v, want ErrInterrupted", context.Cause(tctx))
		}
		if diff := cmp.Diff([]string{"urgent", "after"}, c.Queued()); diff != "" {
			t.Errorf("queue (-want +got):\n%s", diff)
		}
		close(hold)
		if a, b, cc := <-got, <-got, <-got; a != "held" || b != "urgent" || cc != "after" {
			t.Errorf("ran %s, %s, %s", a, b, cc)
		}
		cancel()
		synctest.Wait()
		if _, open := <-got; open {
			t.Error("the consumer still waits after its context ended")
		}
		if ok := c.Withdraw("nothing"); ok {
			t.Error("Withdraw of an unknown uuid")
		}
	})
}
