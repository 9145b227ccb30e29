package permission

// SetCommandRules replaces the allow rules of the slash command that is
// running (source command: its allowed-tools, in force while its turn
// runs); nil or empty removes them. Like every allow rule they yield to
// deny and ask rules. On error nothing changes.
func (c *Checker) SetCommandRules(rules []RuleValue) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.state().clone()
	if err := st.rules.Replace(SourceCommand, Allow, rules...); err != nil {
		return err
	}
	if err := st.rebuild(); err != nil {
		return err
	}
	c.cur.Store(st)
	return nil
}
