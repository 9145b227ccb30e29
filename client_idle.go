package agentloop

// Idle reports whether the streaming input of Messages has nothing left
// to do: no message sent with Send waits in the queue and no turn is
// running. A host that has stopped sending (the stream-json driver after
// stdin ends) waits for Idle before it ends the stream, so that every
// queued message runs. It is safe for concurrent use.
func (c *Client) Idle() bool {
	c.in.mu.Lock()
	defer c.in.mu.Unlock()
	return len(c.in.q) == 0 && c.in.running == nil
}
