package main

import (
	"slices"
	"sync"
)

// replays holds the echoes (--replay-user-messages) of user messages
// that are still queued. A message is echoed when the conversation takes
// it (its turn starts, it folds into the running turn, or it joins the
// history), not when it is read: hosts such as Zed's ACP adapter take the
// echo of a prompt to mean that the results which follow are that
// prompt's, so an earlier turn's late result (after an interrupt) must
// come before it.
type replays struct {
	mu      sync.Mutex
	pending []pendingReplay
}

type pendingReplay struct {
	id   string
	line any
}

// sendAndAdd sends a message with send and, when it is accepted, queues
// its echo line(id), under the lock that taken holds: a turn that takes
// the message at once cannot look for its echo before it is queued.
func (r *replays) sendAndAdd(send func() (string, error), line func(id string) any) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, err := send()
	if err == nil {
		r.pending = append(r.pending, pendingReplay{id, line(id)})
	}
	return id, err
}

// withdraw runs remove, which takes messages out of the conversation's
// queue and returns their ids, and forgets their echoes, in one step
// under the lock taken holds. Were they two steps, a turn ending between
// them would find the messages gone from the queue, take them for run,
// and echo what never ran.
func (r *replays) withdraw(remove func() []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := remove()
	r.pending = slices.DeleteFunc(r.pending, func(p pendingReplay) bool { return slices.Contains(ids, p.id) })
}

// taken returns, in the order they were read, the echoes of the messages
// no longer in queued() (called under the lock), and forgets them.
func (r *replays) taken(queuedNow func() []string) []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	queued := queuedNow()
	var out []any
	r.pending = slices.DeleteFunc(r.pending, func(p pendingReplay) bool {
		if slices.Contains(queued, p.id) {
			return false
		}
		out = append(out, p.line)
		return true
	})
	return out
}

// flushReplays writes the echoes of the messages the conversation has
// taken.
func (d *streamDriver) flushReplays() {
	if !d.c.sdk.replayUser {
		return
	}
	for _, l := range d.replay.taken(d.client.Queued) {
		_ = d.out.value(l)
	}
}
