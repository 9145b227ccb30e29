package permission

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// This file runs command lines in real bash for the differential fuzzer
// (difffuzz_test.go): in a throwaway directory, with HOME, TMPDIR and the
// working directory inside it, PATH limited to a few programs, a time
// limit, the process group killed afterwards and, where the kernel has
// Landlock, writes confined to the directory.

// Environment variables of the re-executed test binary that starts bash.
const (
	diffEnvRoot = "AGENTLOOP_DIFFFUZZ_ROOT"
	diffEnvCmd  = "AGENTLOOP_DIFFFUZZ_CMD"
	diffEnvBash = "AGENTLOOP_DIFFFUZZ_BASH"
	// exit codes of the helper
	diffExitNoLandlock = 97
	diffExitNoExec     = 98
)

// diffPrograms are the programs on the PATH of the commands run. touch
// and mkdir are wrappers that log their calls, so that a run of a command a
// deny rule names is seen whatever file name it was given.
var diffPrograms = []string{"cat", "ls", "head", "tail", "wc", "grep", "sed", "sort", "uniq", "cut", "tr", "printf",
	"true", "false", "sleep", "tee", "cp", "env", "bash", "sh", "find", "xargs", "date", "basename", "dirname", "pwd",
	"test", "stat", "diff", "seq", "od"}

// diffSeedFiles are the files of the working directory before a run.
var diffSeedFiles = map[string]string{"work/a.txt": "alpha\nbeta\n", "work/b.go": "package b\n", "work/sub/c.txt": "gamma\n",
	"home/.profile": "# empty\n"}

// diffRun is what one run of a command line did.
type diffRun struct {
	changed  []string // files created, removed or modified under work/ and home/
	calls    []string // logged calls of the wrapped programs (touch, mkdir)
	timedOut bool
	output   string
}

// effect reports whether the run left any trace.
func (r diffRun) effect() bool { return len(r.changed) > 0 || len(r.calls) > 0 }

// denied reports whether the run called a program the deny variant names.
func (r diffRun) denied() bool { return len(r.calls) > 0 }

func (r diffRun) String() string {
	s := fmt.Sprintf("changed %q, calls %q", r.changed, r.calls)
	if r.timedOut {
		s += " (timed out)"
	}
	return s
}

var (
	diffBashOnce sync.Once
	diffBashPath string
	diffBashErr  error

	diffSandboxMu   sync.Mutex
	diffSandboxNote string // why runs are not confined, if they are not
)

// findBash locates bash, or reports why the differential tests cannot run.
func findBash() (string, error) {
	diffBashOnce.Do(func() {
		diffBashPath, diffBashErr = exec.LookPath("bash")
		if diffBashErr == nil {
			diffBashPath, diffBashErr = filepath.EvalSymlinks(diffBashPath)
		}
	})
	return diffBashPath, diffBashErr
}

// runInBash runs command with bash -c in a fresh directory below dir and
// reports what it changed.
func runInBash(dir, command string) (diffRun, error) {
	bash, err := findBash()
	if err != nil {
		return diffRun{}, err
	}
	if strings.ContainsRune(command, 0) {
		return diffRun{}, nil // cannot be passed to exec; the checker refuses NUL anyway
	}
	root, err := os.MkdirTemp(dir, "run")
	if err != nil {
		return diffRun{}, fmt.Errorf("differential run: %w", err)
	}
	defer os.RemoveAll(root)
	root, err = filepath.EvalSymlinks(root)
	if err != nil {
		return diffRun{}, fmt.Errorf("differential run: %w", err)
	}
	if err := diffLayout(root); err != nil {
		return diffRun{}, err
	}
	before, err := diffSnapshot(root)
	if err != nil {
		return diffRun{}, err
	}
	var out bytes.Buffer
	timedOut, code, err := diffExec(root, bash, command, &out, true)
	if err != nil {
		return diffRun{}, err
	}
	if code == diffExitNoLandlock {
		diffSandboxMu.Lock()
		if diffSandboxNote == "" {
			diffSandboxNote = "runs not confined by Landlock: " + strings.TrimSpace(out.String())
		}
		diffSandboxMu.Unlock()
		out.Reset()
		if err := diffLayout(root); err != nil {
			return diffRun{}, err
		}
		if timedOut, _, err = diffExec(root, bash, command, &out, false); err != nil {
			return diffRun{}, err
		}
	}
	after, err := diffSnapshot(root)
	if err != nil {
		return diffRun{}, err
	}
	r := diffRun{timedOut: timedOut, output: out.String()}
	for p, v := range after {
		if w, ok := before[p]; !ok || w != v {
			r.changed = append(r.changed, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			r.changed = append(r.changed, p+" (removed)")
		}
	}
	sort.Strings(r.changed)
	if b, err := os.ReadFile(filepath.Join(root, "log", "calls")); err == nil {
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l != "" {
				r.calls = append(r.calls, l)
			}
		}
	}
	return r, nil
}

// diffLayout creates work/, home/, tmp/, log/ and bin/ below root.
func diffLayout(root string) error {
	for _, d := range []string{"work/sub", "home", "tmp", "log", "bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return fmt.Errorf("differential layout: %w", err)
		}
	}
	for p, c := range diffSeedFiles {
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			return fmt.Errorf("differential layout: %w", err)
		}
	}
	bin := filepath.Join(root, "bin")
	for _, p := range diffPrograms {
		dst := filepath.Join(bin, p)
		if _, err := os.Lstat(dst); err == nil {
			continue
		}
		real, err := exec.LookPath(p)
		if err != nil {
			continue
		}
		if err := os.Symlink(real, dst); err != nil {
			return fmt.Errorf("differential layout: %w", err)
		}
	}
	for _, p := range []string{"touch", "mkdir"} {
		real, err := exec.LookPath(p)
		if err != nil {
			return fmt.Errorf("differential layout: %w", err)
		}
		script := fmt.Sprintf("#!%s\nprintf '%%s\\n' \"%s $*\" >>'%s'\nexec '%s' \"$@\"\n", "/bin/sh", p,
			filepath.Join(root, "log", "calls"), real)
		if err := os.WriteFile(filepath.Join(bin, p), []byte(script), 0o755); err != nil {
			return fmt.Errorf("differential layout: %w", err)
		}
	}
	return nil
}

// diffSnapshot maps every entry under work/ and home/ to its type and
// content.
func diffSnapshot(root string) (map[string]string, error) {
	snap := map[string]string{}
	for _, top := range []string{"work", "home"} {
		base := filepath.Join(root, top)
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if p == base {
					return err
				}
				return nil
			}
			rel, _ := filepath.Rel(root, p)
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				t, _ := os.Readlink(p)
				snap[rel] = "link:" + t
			case d.IsDir():
				snap[rel] = "dir"
			default:
				b, _ := os.ReadFile(p)
				snap[rel] = "file:" + string(b)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("differential snapshot: %w", err)
		}
	}
	return snap, nil
}

// diffExec runs bash -c command in root/work, through the test binary
// (which confines it with Landlock first) when confine is set.
func diffExec(root, bash, command string, out *bytes.Buffer, confine bool) (timedOut bool, code int, err error) {
	env := []string{"PATH=" + filepath.Join(root, "bin"), "HOME=" + filepath.Join(root, "home"),
		"TMPDIR=" + filepath.Join(root, "tmp"), "LANG=C", "LC_ALL=C"}
	var cmd *exec.Cmd
	if confine {
		self, err := os.Executable()
		if err != nil {
			return false, 0, fmt.Errorf("differential run: %w", err)
		}
		cmd = exec.Command(self, "-test.run=^TestDifferentialHelper$", "-test.count=1")
		cmd.Env = append(env, diffEnvRoot+"="+root, diffEnvCmd+"="+command, diffEnvBash+"="+bash)
	} else {
		cmd = exec.Command(bash, "-c", command)
		cmd.Env = env
	}
	cmd.Dir = filepath.Join(root, "work")
	w := &cappedWriter{buf: out, max: 16 << 10}
	cmd.Stdout, cmd.Stderr = w, w
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return false, 0, fmt.Errorf("differential run: %w", err)
	}
	pgid := cmd.Process.Pid
	var killed atomic.Bool // set by the timer's goroutine
	timer := time.AfterFunc(2*time.Second, func() {
		killed.Store(true)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	})
	err = cmd.Wait()
	timer.Stop()
	// Background commands (&, coproc) may still be running: give them a
	// moment to leave their trace, then kill what is left.
	for i := 0; i < 25 && syscall.Kill(-pgid, 0) == nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	timedOut = killed.Load()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return timedOut, 0, nil
	case errors.As(err, &ee):
		return timedOut, ee.ExitCode(), nil
	}
	return timedOut, 0, fmt.Errorf("differential run: %w", err)
}

// cappedWriter keeps the first max bytes written to it.
type cappedWriter struct {
	mu  sync.Mutex
	buf *bytes.Buffer
	max int
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.max - w.buf.Len(); room > 0 {
		if len(p) > room {
			w.buf.Write(p[:room])
		} else {
			w.buf.Write(p)
		}
	}
	return len(p), nil
}

// TestDifferentialHelper is not a test: it is the process runInBash starts
// to confine bash with Landlock (writes only below the run's directory and
// to /dev/null) before executing it.
func TestDifferentialHelper(t *testing.T) {
	root := os.Getenv(diffEnvRoot)
	if root == "" {
		t.Skip("helper process of the differential fuzzer")
	}
	runtime.LockOSThread() // the restriction applies to this thread and what it executes
	if err := confineWrites(root, "/dev/null"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(diffExitNoLandlock)
	}
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTLOOP_DIFFFUZZ_") {
			env = append(env, kv)
		}
	}
	err := syscall.Exec(os.Getenv(diffEnvBash), []string{"bash", "-c", os.Getenv(diffEnvCmd)}, env)
	fmt.Fprintln(os.Stderr, "exec bash:", err)
	os.Exit(diffExitNoExec)
}

// diffVariant is one checker configuration the lines are judged by.
type diffVariant struct {
	name string
	// denyOnly: only runs of the denied programs count as a bypass (Bash
	// itself is allowed); otherwise any change does.
	denyOnly bool
	cfg      func(dir string) Config
}

var diffVariants = []diffVariant{
	{name: "echo-allowed", cfg: func(dir string) Config {
		return Config{Rules: RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: []string{"Bash(echo:*)"}}}},
			Dirs: []string{dir}, Home: dir}
	}},
	{name: "echo-allowed-touch-denied", cfg: func(dir string) Config {
		return Config{Rules: RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: []string{"Bash(echo:*)"},
			Deny: []string{"Bash(touch:*)", "Bash(mkdir:*)"}}}}, Dirs: []string{dir}, Home: dir}
	}},
	{name: "plan", cfg: func(dir string) Config {
		return Config{Mode: ModePlan, Dirs: []string{dir}, Home: dir}
	}},
	{name: "bash-allowed-touch-denied", denyOnly: true, cfg: func(dir string) Config {
		return Config{Rules: RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: []string{"Bash"},
			Deny: []string{"Bash(touch:*)", "Bash(mkdir:*)"}}}}, Dirs: []string{dir}, Home: dir}
	}},
}

// diffJudge decides command lines under every variant.
type diffJudge struct {
	checkers []*Checker
	force    bool // the mutation: every line is allowed
}

func newDiffJudge(dir string, force bool) (*diffJudge, error) {
	j := &diffJudge{force: force}
	for _, v := range diffVariants {
		c, err := New(v.cfg(dir))
		if err != nil {
			return nil, fmt.Errorf("checker %s: %w", v.name, err)
		}
		j.checkers = append(j.checkers, c)
	}
	return j, nil
}

// allowed returns the indexes of the variants that allow command.
func (j *diffJudge) allowed(command string) []int {
	var out []int
	in, err := jsonCommand(command)
	if err != nil {
		return nil
	}
	for i, c := range j.checkers {
		if j.force || c.Decide(context.Background(), Call{Tool: "Bash", Input: in}).Behavior == Allow {
			out = append(out, i)
		}
	}
	return out
}

// bypass reports the variants under which a run that was allowed had an
// effect it must not have.
func bypass(allowed []int, r diffRun) []string {
	var out []string
	for _, i := range allowed {
		v := diffVariants[i]
		if v.denyOnly && r.denied() || !v.denyOnly && r.effect() {
			out = append(out, v.name)
		}
	}
	return out
}
