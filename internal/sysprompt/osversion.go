package sysprompt

import (
	"os"
	"runtime"
	"strings"
)

// OSVersion describes the operating system's version: on Linux the kernel
// release ("Linux 6.8.0"), elsewhere the system's name alone.
func OSVersion() string {
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
