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

// add queues the echo line of message id.
func (r *replays) add(id string, line any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(r.pending, pendingReplay{id, line})
}

// drop forgets the echo of a message withdrawn before it ran.
func (r *replays) drop(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = slices.DeleteFunc(r.pending, func(p pendingReplay) bool { return p.id == id })
}

// taken returns, in the order they were read, the echoes of the messages
// no longer in queued, and forgets them.
func (r *replays) taken(queued []string) []any {
	r.mu.Lock()
	defer r.mu.Unlock()
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
	for _, l := range d.replay.taken(d.client.Queued()) {
		_ = d.out.value(l)
	}
}
