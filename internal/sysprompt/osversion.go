package sysprompt

import (
	"os"
	"runtime"
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

// OSVersion describes the operating system's version: on Linux the kernel
// release ("Linux 6.8.0"), elsewhere the system's name alone. The kernel
// release cannot change while the process runs, so it is read once per
// process; every session's system prompt shares the string.
func OSVersion() string { return osVersion() }

var osVersionOnce lazy.Value[string] // the value of osVersion, read at its first use

func osVersion() string { return osVersionOnce.Get(readOSVersion) }

func readOSVersion() string {
	name := runtime.GOOS
	if len(name) > 0 {
		name = strings.ToUpper(name[:1]) + name[1:]
	}
	if runtime.GOOS == "linux" {
		if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
			return name + " " + strings.TrimSpace(string(b))
		}
	}
	return name
}
