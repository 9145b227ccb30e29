//go:build linux

package sandbox

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// benchShells are the shells the benchmarks start; `true` is a builtin,
// so the time is the shell's start and the sandbox's, not the command's.
var benchShells = []string{"sh", "bash"}

func benchShell(b *testing.B, name string) string {
	shell, err := exec.LookPath(name)
	if err != nil {
		b.Skipf("%s not found", name)
	}
	return shell
}

// BenchmarkBashStartPlain starts and waits for `sh -c true` and
// `bash -c true` with a plain exec.Cmd.
func BenchmarkBashStartPlain(b *testing.B) {
	for _, name := range benchShells {
		b.Run(name, func(b *testing.B) {
			shell := benchShell(b, name)
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
		})
	}
}

// BenchmarkBashStartSandboxed does the same under a typical policy: the
// working directory writable except one denied file, a denied directory
// to read, a temp dir, and the network through a proxy port; with
// Landlock and seccomp only, and with the mount namespace step too.
func BenchmarkBashStartSandboxed(b *testing.B) {
	needLandlock(b)
	root := b.TempDir()
	work := filepath.Join(root, "work")
	for _, d := range []string{work, filepath.Join(work, "secrets"), filepath.Join(work, "src"), filepath.Join(root, "tmp")} {
		if err := exec.Command("mkdir", "-p", d).Run(); err != nil {
			b.Fatal(err)
		}
	}
	if err := exec.Command("touch", filepath.Join(work, ".env")).Run(); err != nil {
		b.Fatal(err)
	}
	p := &Policy{
		WriteAllow: []string{work},
		WriteDeny:  []string{filepath.Join(work, ".env")},
		ReadDeny:   []string{filepath.Join(work, "secrets")},
		TempDir:    filepath.Join(root, "tmp"),
		Network:    NetProxy,
		ProxyPort:  40000,
	}
	mountsOK, _ := MetadataProtected()
	for _, variant := range []string{"landlock+seccomp", "with-mount-ns"} {
		for _, name := range benchShells {
			b.Run(variant+"/"+name, func(b *testing.B) {
				if variant == "with-mount-ns" && !mountsOK {
					b.Skip("no mount namespace step here")
				}
				testNoMountStep = variant != "with-mount-ns"
				defer func() { testNoMountStep = false }()
				shell := benchShell(b, name)
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
			})
		}
	}
}

// BenchmarkMountStep measures the mount namespace step alone for the
// typical policy, on a spare thread that is discarded after each run, as
// in Start (the thread's creation included); the one-time check of
// MetadataProtected is the same step with /tmp as the only root.
func BenchmarkMountStep(b *testing.B) {
	needLandlock(b)
	if ok, err := MetadataProtected(); !ok {
		b.Skipf("no mount namespace step here: %v", err)
	}
	root := b.TempDir()
	work := filepath.Join(root, "work")
	if err := exec.Command("mkdir", "-p", filepath.Join(work, "secrets"), filepath.Join(root, "tmp")).Run(); err != nil {
		b.Fatal(err)
	}
	if err := exec.Command("touch", filepath.Join(work, ".env")).Run(); err != nil {
		b.Fatal(err)
	}
	typical, err := planMounts((&Policy{WriteAllow: []string{work}, WriteDeny: []string{filepath.Join(work, ".env")},
		ReadDeny: []string{filepath.Join(work, "secrets")}, TempDir: filepath.Join(root, "tmp")}).resolved())
	if err != nil {
		b.Fatal(err)
	}
	plans := map[string]*mountPlan{
		"probe":       {roots: []string{"/tmp"}},
		"typical":     typical,
		"thread only": nil,
	}
	for _, name := range []string{"thread only", "probe", "typical"} {
		plan := plans[name]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				done := make(chan error, 1)
				fn := func() error { return nil }
				if plan != nil {
					fn = plan.apply
				}
				go onSpareThread(fn, done, 0)
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				if plan != nil && plan.ns != nil {
					plan.ns.Close()
					plan.ns = nil
				}
			}
		})
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
		rp := p.resolved()
		fd, _, err := buildRuleset(abi, rp, append(rp.WriteDeny, rp.ReadDeny...))
		if err != nil {
			b.Fatal(err)
		}
		closeFD(fd)
	}
}

// BenchmarkStartInterleaved runs `sh -c true` (and `bash -c true`)
// plainly, sandboxed with Landlock and seccomp only, with the mount
// namespace step too, and with configuration protected as well (an
// existing .claude bound, a placeholder at a missing .mcp.json), in turn
// in every iteration, and reports the median of each (ms/plain,
// ms/landlock, ms/mountns, ms/protect): medians of interleaved
// runs resist the noise of a busy machine better than separate
// benchmarks.
func BenchmarkStartInterleaved(b *testing.B) {
	needLandlock(b)
	if ok, err := MetadataProtected(); !ok {
		b.Skipf("no mount namespace step here: %v", err)
	}
	root := b.TempDir()
	work := filepath.Join(root, "work")
	if err := exec.Command("mkdir", "-p", filepath.Join(work, "secrets"), filepath.Join(work, "src"), filepath.Join(root, "tmp")).Run(); err != nil {
		b.Fatal(err)
	}
	if err := exec.Command("touch", filepath.Join(work, ".env")).Run(); err != nil {
		b.Fatal(err)
	}
	p := &Policy{WriteAllow: []string{work}, WriteDeny: []string{filepath.Join(work, ".env")},
		ReadDeny: []string{filepath.Join(work, "secrets")}, TempDir: filepath.Join(root, "tmp"), Network: NetAll}
	// The session's shape: its configuration protected too, one path
	// existing (.claude) and one held by a placeholder (.mcp.json).
	if err := exec.Command("mkdir", "-p", filepath.Join(work, ".claude")).Run(); err != nil {
		b.Fatal(err)
	}
	protected := *p
	protected.Protect = []string{filepath.Join(work, ".claude"), filepath.Join(work, ".mcp.json")}
	defer func() { testNoMountStep = false }()
	for _, name := range benchShells {
		b.Run(name, func(b *testing.B) {
			shell := benchShell(b, name)
			var times [4][]time.Duration
			for b.Loop() {
				for v := range 4 {
					cmd := exec.Command(shell, "-c", "true")
					cmd.Dir = work
					start := time.Now()
					var err error
					switch v {
					case 0:
						err = cmd.Start()
					case 3:
						testNoMountStep = false
						err = Start(cmd, &protected)
					default:
						testNoMountStep = v == 1
						err = Start(cmd, p)
					}
					if err != nil {
						b.Fatal(err)
					}
					if err := cmd.Wait(); err != nil {
						b.Fatal(err)
					}
					times[v] = append(times[v], time.Since(start))
				}
			}
			for v, unit := range []string{"ms/plain", "ms/landlock", "ms/mountns", "ms/protect"} {
				slices.Sort(times[v])
				b.ReportMetric(float64(times[v][len(times[v])/2].Microseconds())/1000, unit)
			}
		})
	}
}
