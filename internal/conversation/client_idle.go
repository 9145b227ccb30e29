package conversation

// Idle is agentloop's Client.Idle; see its doc there.
func (c *Client) Idle() bool {
	c.in.mu.Lock()
	defer c.in.mu.Unlock()
	return len(c.in.q) == 0 && c.in.running == nil
}
