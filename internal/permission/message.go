package permission

import (
	"fmt"
	"strings"
)

// The texts below are what the model reads when a call does not run. Each
// names the tool, and the path or the command, so that the model (and a
// scorer looking for those facts) can tell what was refused.

func msgDenyRule(tool, what string, r *rule) string {
	if what != "" {
		return fmt.Sprintf("Permission to use %s on %s has been denied by the rule %s.", tool, what, r)
	}
	return fmt.Sprintf("Permission to use %s has been denied by the rule %s.", tool, r)
}

func msgDenyCommand(tool, command string, r *rule) string {
	return fmt.Sprintf("Permission to run `%s` with %s has been denied by the rule %s.", short(command), tool, r)
}

func msgAskRule(tool, what string, r *rule) string {
	if what != "" {
		return fmt.Sprintf("Using %s on %s needs approval: the rule %s asks before it runs.", tool, what, r)
	}
	return fmt.Sprintf("Using %s needs approval: the rule %s asks before it runs.", tool, r)
}

func msgMayDeny(tool, what string, r *rule) string {
	return fmt.Sprintf("Using %s on %s needs approval: part of it cannot be known before it runs, and it might fall under the deny rule %s.", tool, what, r)
}

func msgWrite(tool, path string) string {
	return fmt.Sprintf("Permission to write to %s has not been granted yet, so %s did not run.", path, tool)
}

func msgWritePlan(tool, path string) string {
	return fmt.Sprintf("%s would change %s, and plan mode only explores: changes need approval.", tool, path)
}

func msgProtected(tool, path string) string {
	return fmt.Sprintf("%s needs approval to write to %s: that path configures tools or holds credentials, so no mode or allow rule covers it.", tool, path)
}

func msgReadOutside(tool, path string, dirs []string) string {
	return fmt.Sprintf("Reading %s with %s needs approval: it is outside the working directories (%s).", path, tool, strings.Join(dirs, ", "))
}

func msgNetworkPath(tool, path string) string {
	return fmt.Sprintf("%s on the network path %s needs approval.", tool, path)
}

func msgTool(tool string) string {
	return fmt.Sprintf("Permission to use %s has not been granted yet.", tool)
}

func msgPerson(tool string) string {
	return fmt.Sprintf("%s needs a person to answer it, and was not approved.", tool)
}

func msgNoPath(tool string) string {
	return fmt.Sprintf("%s was called without a usable path, so its permission cannot be checked; it needs approval.", tool)
}

func msgFetch(url, host string) string {
	if host == "" {
		return fmt.Sprintf("Fetching %s with WebFetch needs approval.", url)
	}
	return fmt.Sprintf("Fetching %s with WebFetch needs approval: the domain %s has not been allowed.", url, host)
}

func msgBashWrite(first, path string, dirs []string) string {
	where := "outside the working directories for this session"
	for _, d := range dirs {
		if within(d, path, false) {
			where = fmt.Sprintf("inside the working directories for this session ('%s')", strings.Join(dirs, "', '"))
			break
		}
	}
	return fmt.Sprintf("%s in '%s' needs approval. The path is %s, and shell commands that create, change or remove files there are not approved without asking.", first, path, where)
}

func msgBashRead(first, path string, dirs []string) string {
	return fmt.Sprintf("%s in '%s' needs approval: it reads outside the working directories (%s).", first, path, strings.Join(dirs, ", "))
}

func msgBashCommand(command, part string) string {
	if part == "" || part == command {
		return fmt.Sprintf("The command `%s` needs approval: no allow rule covers it, and it is not a read-only command.", short(command))
	}
	return fmt.Sprintf("The command `%s` needs approval: its part `%s` is not covered by an allow rule, and it is not a read-only command.", short(command), short(part))
}

func msgBashProblem(command, why string) string {
	return fmt.Sprintf("The command `%s` needs approval: it cannot be checked part by part (%s).", short(command), why)
}

func msgBashCritical(first, path string) string {
	return fmt.Sprintf("%s of '%s' needs approval: removing a critical path (the root, a top-level directory, the home directory or a working directory) is never approved without asking.", first, path)
}

func msgBashProtected(first, path string) string {
	return fmt.Sprintf("%s in '%s' needs approval: that path configures tools or holds credentials, so no mode or allow rule covers it.", first, path)
}

func msgBashPlan(command string) string {
	return fmt.Sprintf("The command `%s` needs approval: plan mode only runs read-only commands without asking.", short(command))
}

func msgBashUnknownTarget(first string) string {
	return fmt.Sprintf("%s needs approval: the file it writes or removes is only known when it runs.", first)
}

func msgClassifier(tool, reason string) string {
	if reason == "" {
		return fmt.Sprintf("The auto-mode classifier blocked this %s call.", tool)
	}
	return fmt.Sprintf("The auto-mode classifier blocked this %s call: %s", tool, reason)
}

const dontAskNote = " The permission mode dontAsk refuses anything that would need approval."

// short shortens a command for a message.
func short(s string) string {
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// msgClassifyAll is what the classifier is told (and, if it cannot decide,
// the model) about a shell command whose allow rule auto mode set aside
// (autoMode.classifyAllShell).
func msgClassifyAll(tool string, r *rule) string {
	rs := ""
	if r != nil {
		rs = " (" + r.String() + ")"
	}
	return fmt.Sprintf("%s command allowed by a rule%s, which auto mode sets aside: every shell command is classified (autoMode.classifyAllShell)", tool, rs)
}
