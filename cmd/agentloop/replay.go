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

// drop forgets the echo of a message withdrawn before it ran.
func (r *replays) drop(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = slices.DeleteFunc(r.pending, func(p pendingReplay) bool { return p.id == id })
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
