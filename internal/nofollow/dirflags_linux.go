//go:build linux

package nofollow

import "golang.org/x/sys/unix"

// dirOpenFlags: the directories on the way are only walked, not read, so
// they need search permission only.
const dirOpenFlags = unix.O_PATH
