package permission

// BashReadOnly reports whether a Bash command line only reads and prints,
// by the checks that let a command run without a rule: the whole line
// parses, every simple command is one of the read-only commands (with
// read-only options), no assignment is unsafe, and nothing is redirected
// to a file. A cd is not read-only here: it changes where the next
// commands run. The engine runs such calls concurrently with the reply's
// other read-only calls, as the reference does ("sleep 5; echo done" is
// one of them).
func BashReadOnly(command, cwd string) bool {
	a := analyzeBash(command, cwd, "")
	if len(a.problems) > 0 || a.unparsed || a.hidden != "" || len(a.cmds) == 0 {
		return false
	}
	for _, r := range a.redirs {
		if !r.write {
			continue
		}
		if t, ok := r.target.lit(); !ok || !devices()[t] {
			return false
		}
	}
	for _, c := range a.cmds {
		if c.transparent {
			continue
		}
		if len(c.args) == 0 {
			if len(c.assigns) > 0 {
				return false // sets shell variables
			}
			continue
		}
		form, _ := allowForm(c.args)
		if len(form) == 0 {
			return false
		}
		if name, _ := baseName(form[0]); name == "cd" || !readOnlyCheck(form).ok {
			return false
		}
		for _, as := range c.assigns {
			if !safeAssign(as) {
				return false
			}
		}
	}
	return true
}
