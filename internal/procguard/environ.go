package procguard

import "os"

// HideCredentials is called first thing in a command's main. For each of
// the variables names that is set, it moves the value into the Go
// process's own copy of the environment (os.Getenv and os.Environ keep
// returning it) and overwrites it in the environment block the process
// was started with, which is what the kernel shows in
// /proc/<pid>/environ. So a reader that gets past ProtectProcess's
// measures still finds no credential there.
//
// Where the platform has no such block (not Linux) it does nothing. An
// error leaves the block as it was, and the caller should say so; os's
// copy is right either way.
func HideCredentials(names []string) error {
	if disabled.Load() {
		return nil
	}
	var set []string
	for _, n := range names {
		if v, ok := os.LookupEnv(n); ok {
			// Setenv copies name and value into a new string, so the
			// process no longer refers to the block for this variable.
			if err := os.Setenv(n, v); err != nil {
				return err
			}
			set = append(set, n)
		}
	}
	if len(set) == 0 {
		return nil
	}
	return scrubEnvironBlock(set)
}
