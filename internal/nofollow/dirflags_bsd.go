//go:build unix && !linux

package nofollow

const dirOpenFlags = 0
