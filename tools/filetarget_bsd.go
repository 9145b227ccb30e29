//go:build unix && !linux

package tools

const dirOpenFlags = 0
