//go:build linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// needMetadata skips the test, naming the reason, where commands cannot
// be kept from changing metadata (no Landlock, or no mount namespace).
func needMetadata(t *testing.T) {
	t.Helper()
	needLandlock(t)
	if ok, err := MetadataProtected(); !ok {
		t.Skipf("metadata tests skip: %v", err)
	}
}

// fileState is the metadata of a file that a command must not change
// outside its writable roots.
type fileState struct {
	Mode     os.FileMode
	UID, GID uint32
	Mtime    time.Time
	Xattr    string
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	s := fileState{Mode: fi.Mode(), UID: st.Uid, GID: st.Gid, Mtime: fi.ModTime()}
	buf := make([]byte, 64)
	if n, err := unix.Lgetxattr(path, "user.sandbox_test", buf); err == nil {
		s.Xattr = string(buf[:n])
	}
	return s
}

// metaLayout is a layout with a file outside the writable roots and a
// script inside them, both with a known mode and modification time.
type metaLayout struct {
	layout
	victim, script string
}

var knownTime = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)

func newMetaLayout(t *testing.T) metaLayout {
	t.Helper()
	m := metaLayout{layout: newLayout(t)}
	m.victim = filepath.Join(m.out, "victim")
	m.script = filepath.Join(m.work, "src", "build.sh")
	for _, f := range []string{m.victim, m.script} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\necho built\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, knownTime, knownTime); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// TestMetadata: a sandboxed command changes modes, owners and times only
// inside its writable roots, minus the denied paths; devices stay
// writable.
func TestMetadata(t *testing.T) {
	needMetadata(t)
	m := newMetaLayout(t)
	protected := filepath.Join(m.work, "protected.txt")
	tests := []struct {
		name, script, path string
		// want: the command exits 0, and path's metadata changed
		ok, changed bool
	}{
		{"chmod outside", "chmod 000 " + m.victim, m.victim, false, false},
		{"chmod +x outside", "chmod +x " + m.victim, m.victim, false, false},
		{"chown outside", "chown 1234:1234 " + m.victim, m.victim, false, false},
		{"touch -d outside", "touch -d 2001-02-03 " + m.victim, m.victim, false, false},
		{"touch outside", "touch " + m.victim, m.victim, false, false},
		{"chmod outside dir", "chmod 700 " + m.out, m.out, false, false},
		{"chmod outside through the parent's root", "chmod 000 /proc/$PPID/root" + m.victim, m.victim, false, false},
		{"chmod write-denied", "chmod 000 protected.txt", protected, false, false},
		{"touch -d write-denied", "touch -d 2001-02-03 protected.txt", protected, false, false},
		{"chmod read-denied dir", "chmod 700 secrets", m.secret, false, false},
		{"chown read-denied dir", "chown 1234 secrets", m.secret, false, false},
		// A no-op mode, so that a broken sandbox cannot break the host.
		{"chmod /dev/null", "chmod 666 /dev/null", "/dev/null", false, false},
		{"write devices", "echo x > /dev/null && head -c1 /dev/zero > /dev/null && echo x > /dev/full; true", "/dev/null", true, false},
		{"chmod +x inside", "chmod +x src/build.sh", m.script, true, true},
		{"chown inside", "chown 1234:1234 src/build.sh", m.script, true, true},
		{"touch -d inside", "touch -d 2001-02-03 src/build.sh", m.script, true, true},
		{"chmod temp dir", `chmod 700 "$TMPDIR"`, m.tmp, true, true},
		{"write inside", "echo hi > src/new.txt && chmod 600 src/new.txt", filepath.Join(m.work, "src"), true, true},
	}
	type outcome struct{ OK, Changed bool }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := stateOf(t, tt.path)
			out, ok := run(t, m.policy(), m.work, tt.script)
			after := stateOf(t, tt.path)
			got, want := outcome{ok, before != after}, outcome{tt.ok, tt.changed}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: outcome (-want +got):\n%s\nmetadata before %+v\nafter %+v\noutput: %s", tt.script, diff, before, after, out)
			}
		})
	}
	// The host itself is not restricted.
	if err := os.Chmod(m.victim, 0o600); err != nil {
		t.Errorf("the host cannot chmod %s: %v", m.victim, err)
	}
	if err := os.Chtimes(m.victim, time.Now(), time.Now()); err != nil {
		t.Errorf("the host cannot touch %s: %v", m.victim, err)
	}
}

// TestMetadataXattr: extended attributes, set with a system call (the
// test binary) and with setfattr where installed, change only inside.
func TestMetadataXattr(t *testing.T) {
	needMetadata(t)
	m := newMetaLayout(t)
	if err := unix.Setxattr(m.victim, "user.probe", []byte("x"), 0); errors.Is(err, unix.ENOTSUP) {
		t.Skipf("the file system of %s has no user extended attributes", m.victim)
	}
	type outcome struct {
		Errno string
		Xattr string
	}
	for _, tt := range []struct {
		path string
		want outcome
	}{
		{m.victim, outcome{"EROFS", ""}},
		{filepath.Join(m.work, "protected.txt"), outcome{"EROFS", ""}},
		{m.script, outcome{"ok", "x"}},
	} {
		errno := helperErrno(t, m.policy(), "setxattr", tt.path)
		if diff := cmp.Diff(tt.want, outcome{errno, stateOf(t, tt.path).Xattr}); diff != "" {
			t.Errorf("setxattr %s (-want +got):\n%s", tt.path, diff)
		}
	}
	t.Run("setfattr", func(t *testing.T) {
		if _, err := exec.LookPath("setfattr"); err != nil {
			t.Skip("setfattr not installed: the system call case above covers extended attributes")
		}
		if out, ok := run(t, m.policy(), m.work, "setfattr -n user.sandbox_test -v y "+m.victim); ok || stateOf(t, m.victim).Xattr != "" {
			t.Errorf("setfattr outside succeeded: %s", out)
		}
	})
}

// TestMetadataFileFlags: inode flags (chattr) are refused outside too.
func TestMetadataFileFlags(t *testing.T) {
	needMetadata(t)
	if _, err := exec.LookPath("chattr"); err != nil {
		t.Skip("chattr not installed")
	}
	m := newMetaLayout(t)
	// +A (no atime updates) is harmless if a broken sandbox lets it through.
	if out, err := exec.Command("chattr", "+A", m.script).CombinedOutput(); err != nil {
		t.Skipf("the file system has no inode flags: %s", out)
	}
	exec.Command("chattr", "-A", m.script).Run()
	t.Cleanup(func() { exec.Command("chattr", "-A", m.victim).Run() })
	if out, ok := run(t, m.policy(), m.work, "chattr +A "+m.victim); ok {
		t.Errorf("chattr outside succeeded: %s", out)
	}
	if out, ok := run(t, m.policy(), m.work, "chattr +A src/build.sh && chattr -A src/build.sh"); !ok {
		t.Errorf("chattr inside failed: %s", out)
	}
}

// TestMetadataEscapes: a command running as root cannot undo the
// read-only mounts: not by changing mount attributes, cloning or
// remounting a tree, unmounting a denied path's bind, going back to the
// parent's mount namespace, or reaching the parent's root through /proc.
func TestMetadataEscapes(t *testing.T) {
	needMetadata(t)
	m := newMetaLayout(t)
	protected := filepath.Join(m.work, "protected.txt")
	for _, tt := range []struct{ what, path string }{
		{"open_tree", m.victim},
		{"mount_setattr", m.victim},
		{"remount", m.victim},
		{"umount", protected},
		{"setns", m.victim},
		{"procroot", m.victim},
	} {
		t.Run(tt.what, func(t *testing.T) {
			before := stateOf(t, tt.path)
			errno := helperErrno(t, m.policy(), tt.what, tt.path)
			if after := stateOf(t, tt.path); errno == "ok" || after != before {
				t.Errorf("%s: %s, mode %v -> %v", tt.what, errno, before.Mode, after.Mode)
			}
			t.Logf("%s: %s", tt.what, errno)
		})
	}
}

// TestMetadataWorkingDirectory: a command started without Dir inherits
// the process's working directory; inside a writable root it is
// writable there, metadata included.
func TestMetadataWorkingDirectory(t *testing.T) {
	needMetadata(t)
	m := newMetaLayout(t)
	t.Chdir(filepath.Join(m.work, "src"))
	cmd := exec.Command("sh", "-c", "chmod +x build.sh && echo x > made.txt")
	out, err := startAndWait(cmd, m.policy())
	if err != nil || stateOf(t, m.script).Mode&0o111 == 0 {
		t.Errorf("chmod +x in the inherited working directory failed (%v): %s", err, out)
	}
}

// TestMetadataSubmounts: mounts inside a writable root keep their own
// flags: a writable one stays writable, a read-only one stays read-only.
func TestMetadataSubmounts(t *testing.T) {
	needMetadata(t)
	m := newMetaLayout(t)
	rw, ro := filepath.Join(m.work, "src", "rw"), filepath.Join(m.work, "src", "ro")
	for _, d := range []struct {
		dir   string
		flags uintptr
	}{{rw, 0}, {ro, unix.MS_RDONLY}} {
		if err := os.Mkdir(d.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount("sandbox-test", d.dir, "tmpfs", d.flags, "size=1m"); err != nil {
			t.Skipf("cannot mount a tmpfs for the test: %v", err)
		}
		t.Cleanup(func() { unix.Unmount(d.dir, unix.MNT_DETACH) })
	}
	if out, ok := run(t, m.policy(), m.work, "echo x > src/rw/f && chmod +x src/rw/f && chmod 700 src/rw"); !ok {
		t.Errorf("a writable mount inside the root is not writable: %s", out)
	}
	if out, ok := run(t, m.policy(), m.work, "echo x > src/ro/f"); ok {
		t.Errorf("a read-only mount inside the root became writable: %s", out)
	}
	if out, ok := run(t, m.policy(), m.work, "chmod 700 src/ro"); ok {
		t.Errorf("a read-only mount inside the root became writable (chmod): %s", out)
	}
}

// TestPlanMounts: the roots and holes of the mount step.
func TestPlanMounts(t *testing.T) {
	p := &Policy{
		WriteAllow: []string{"/w/b", "/w/a", "/w/a/sub", "/x"},
		TempDir:    "/t",
		WriteDeny:  []string{"/w/a/.env", "/elsewhere/.env", "/w/a/.git", "/w/a/.git/hooks"},
		ReadDeny:   []string{"/w/b/secrets"},
	}
	plan := func(p *Policy) *mountPlan {
		t.Helper()
		m, err := planMounts(p)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	got := plan(p)
	want := &mountPlan{roots: []string{"/t", "/w/a", "/w/b", "/x"}, holes: []string{"/w/a/.env", "/w/a/.git", "/w/b/secrets"},
		carved: []string{"/elsewhere/.env"}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(mountPlan{}, nsKey{})); diff != "" {
		t.Errorf("planMounts (-want +got):\n%s", diff)
	}
	p.ReadOnly = true
	want = &mountPlan{roots: []string{"/t"}, carved: []string{"/w/a/.env", "/elsewhere/.env", "/w/a/.git", "/w/a/.git/hooks", "/w/b/secrets"}}
	if diff := cmp.Diff(want, plan(p), cmp.AllowUnexported(mountPlan{}, nsKey{})); diff != "" {
		t.Errorf("planMounts read-only (-want +got):\n%s", diff)
	}
	p = &Policy{WriteAllow: []string{"/", "/w"}, WriteDeny: []string{"/w/.env"}}
	want = &mountPlan{all: true, holes: []string{"/w/.env"}}
	if diff := cmp.Diff(want, plan(p), cmp.AllowUnexported(mountPlan{}, nsKey{})); diff != "" {
		t.Errorf("planMounts with / writable (-want +got):\n%s", diff)
	}
}

// SANDBOX_MUTATION_NO_MOUNTS=1 switches the mount namespace step off, to
// check that the metadata tests fail without it.
func init() {
	if os.Getenv("SANDBOX_MUTATION_NO_MOUNTS") != "" {
		testNoMountStep = true
	}
}

// TestNamespacesReleased: the mount namespace of a command is kept open
// while the command runs, and closed once it has exited (see
// releaseAfterExit).
func TestNamespacesReleased(t *testing.T) {
	needMetadata(t)
	l := newLayout(t)
	open := func() (n int) {
		fds, _ := os.ReadDir("/proc/self/fd")
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, "mnt:") {
				n++
			}
		}
		return n
	}
	settle := func() int {
		deadline := time.Now().Add(5 * time.Second)
		for open() > 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		return open()
	}
	if n := settle(); n > 0 {
		t.Fatalf("%d mount namespaces open before the test", n)
	}
	cmd := exec.Command("sleep", "1")
	if err := Start(cmd, l.policy()); err != nil {
		t.Fatal(err)
	}
	if n := open(); n != 1 {
		t.Errorf("%d mount namespaces open while the command runs, want 1", n)
	}
	cmd.Wait()
	for range 10 {
		run(t, l.policy(), l.work, "true")
	}
	if n := settle(); n > 0 {
		t.Errorf("%d mount namespaces still open after their commands exited", n)
	}
}
