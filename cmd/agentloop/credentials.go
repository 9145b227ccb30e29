package main

import (
	"fmt"
	"os"
	"slices"

	"github.com/agentloop/agentloop/internal/procguard"
	"github.com/agentloop/agentloop/internal/toolenv"
)

// hiddenVars returns the variables kept out of the environment the kernel
// shows for agentloop's process (/proc/<pid>/environ): the credentials
// that tools never get (toolenv.Credentials) and the other providers'
// secrets, which tools still get unless the settings remove them.
func hiddenVars() []string {
	return slices.Concat(toolenv.Credentials, []string{
		"OPENAI_API_KEY",
		"AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN",
		"AWS_BEARER_TOKEN_BEDROCK",
	})
}

// hideCredentials runs first in main: it removes the credentials from the
// environment block the kernel shows for the process (the Go process keeps
// its copy) and makes the process non-dumpable, so that no process
// agentloop starts can read them from /proc or its memory
// (internal/procguard). A failure is reported on stderr and the run goes
// on.
func hideCredentials() {
	if err := procguard.HideCredentials(hiddenVars()); err != nil {
		fmt.Fprintf(os.Stderr, "agentloop: warning: %v; the credentials stay in this process's initial environment\n", err)
	}
	procguard.ProtectProcess()
}
