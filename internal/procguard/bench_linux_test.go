//go:build linux

package procguard

import (
	"os/exec"
	"testing"
)

// BenchmarkStart compares starting /bin/true from an ordinary thread
// (the baseline) with starting it from a launching thread.
func BenchmarkStart(b *testing.B) {
	for _, c := range []struct {
		name  string
		start func(*exec.Cmd) error
	}{{"plain", (*exec.Cmd).Start}, {"procguard", Start}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				if err := c.start(cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
