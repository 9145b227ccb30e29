//go:build linux

package sandbox

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// benchBash is the shell the benchmarks start; `true` is a builtin, so
// the time is bash's start and the sandbox's, not the command's.
func benchBash(b *testing.B) string {
	shell, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("bash not found")
	}
	return shell
}

// BenchmarkBashStartPlain starts and waits for `bash -c true`.
func BenchmarkBashStartPlain(b *testing.B) {
	shell := benchBash(b)
	dir := b.TempDir()
	for b.Loop() {
		cmd := exec.Command(shell, "-c", "true")
		cmd.Dir = dir
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBashStartSandboxed does the same under a typical policy: the
// working directory writable except one denied file, a denied directory
// to read, a temp dir, and the network through a proxy port.
func BenchmarkBashStartSandboxed(b *testing.B) {
	needLandlock(b)
	shell := benchBash(b)
	root := b.TempDir()
	work := filepath.Join(root, "work")
	for _, d := range []string{work, filepath.Join(work, "secrets"), filepath.Join(work, "src"), filepath.Join(root, "tmp")} {
		if err := exec.Command("mkdir", "-p", d).Run(); err != nil {
			b.Fatal(err)
		}
	}
	p := &Policy{
		WriteAllow: []string{work},
		WriteDeny:  []string{filepath.Join(work, ".env")},
		ReadDeny:   []string{filepath.Join(work, "secrets")},
		TempDir:    filepath.Join(root, "tmp"),
		Network:    NetProxy,
		ProxyPort:  40000,
	}
	for b.Loop() {
		cmd := exec.Command(shell, "-c", "true")
		cmd.Dir = work
		if err := Start(cmd, p); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRuleset measures, without the cache, the part of the overhead that grows with the
// policy: computing the grants and building the Landlock ruleset.
func BenchmarkRuleset(b *testing.B) {
	abi := needLandlock(b)
	root := b.TempDir()
	work := filepath.Join(root, "work")
	if err := exec.Command("mkdir", "-p", filepath.Join(work, "secrets"), filepath.Join(work, "src")).Run(); err != nil {
		b.Fatal(err)
	}
	p := &Policy{WriteAllow: []string{work}, ReadDeny: []string{filepath.Join(work, "secrets")}, TempDir: root}
	for b.Loop() {
		fd, _, err := buildRuleset(abi, p.resolved())
		if err != nil {
			b.Fatal(err)
		}
		closeFD(fd)
	}
}
