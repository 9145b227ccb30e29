package tools

import (
	"strconv"
	"strings"
)

// gitHardening is the git configuration every Bash command runs with,
// passed through GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n (the
// command-line scope, which outranks repository files): a repository that
// the model laid out itself cannot make a read-only git command run a
// program of its choosing.
//
//   - safe.bareRepository=explicit: git does not take a directory that
//     merely looks like a bare repository (HEAD, config, objects/, refs/)
//     as one, so a planted config with core.fsmonitor, core.pager,
//     core.sshCommand or diff.external is never read; a bare repository
//     is still used when named with --git-dir or GIT_DIR.
//   - core.fsmonitor=false: git status and friends run no monitor hook.
//   - core.hooksPath=/dev/null: no repository hook runs.
var gitHardening = [][2]string{
	{"safe.bareRepository", "explicit"},
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
}

// withGitHardening appends the entries of gitHardening to env after those
// that env already passes through GIT_CONFIG_COUNT, which it extends
// rather than replaces. A count that is not a number is replaced: git
// would refuse to run with it. Later entries of env win (as exec.Cmd
// uses them).
func withGitHardening(env []string) []string {
	n := 0
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_COUNT="); ok {
			c, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || c < 0 || c > 1<<16 {
				c = 0
			}
			n = c
		}
	}
	out := append([]string(nil), env...)
	for i, kv := range gitHardening {
		k := strconv.Itoa(n + i)
		out = append(out, "GIT_CONFIG_KEY_"+k+"="+kv[0], "GIT_CONFIG_VALUE_"+k+"="+kv[1])
	}
	return append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(n+len(gitHardening)))
}
