package permission

// DenyGlobs returns the path patterns of the deny rules that forbid
// reading (write false: Read deny rules) or writing (write true: Edit,
// Write and Read deny rules) as absolute doublestar patterns, each with a
// leading "/". Like every path rule, a pattern covers what it matches and
// everything below it. The Bash sandbox turns them into the paths a
// sandboxed command may not read or write.
func (c *Checker) DenyGlobs(write bool) []string {
	st := c.state()
	var rules []*rule
	if write {
		rules = st.pathRulesFor(Deny, true, "Edit")
	} else {
		rules = st.readDenyRules("Read")
	}
	var out []string
	for _, r := range rules {
		if r.path == nil {
			continue
		}
		for _, g := range r.path.globs {
			out = append(out, "/"+g)
		}
	}
	return out
}
