//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// needLandlock skips the test, naming the reason, where the kernel cannot
// sandbox.
func needLandlock(t testing.TB) int {
	t.Helper()
	abi, err := Available()
	if err != nil {
		t.Skipf("sandbox tests skip: %v", err)
	}
	return abi
}

// layout is a throwaway tree: a working directory the command may write
// in, a directory outside it, a denied directory with a secret, and a
// session temp dir.
type layout struct {
	work, out, secret, tmp string
}

const secretText = "TOP-SECRET-CONTENT"

func newLayout(t *testing.T) layout {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l := layout{
		work:   filepath.Join(root, "work"),
		out:    filepath.Join(root, "out"),
		secret: filepath.Join(root, "work", "secrets"),
		tmp:    filepath.Join(root, "tmp"),
	}
	for _, d := range []string{l.work, l.out, l.secret, l.tmp, filepath.Join(l.work, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(l.secret, "key"), []byte(secretText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.work, "protected.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l layout) policy() *Policy {
	return &Policy{
		WriteAllow: []string{l.work},
		WriteDeny:  []string{filepath.Join(l.work, "protected.txt")},
		ReadDeny:   []string{l.secret},
		TempDir:    l.tmp,
	}
}

// run runs script with bash under p in dir and returns its combined
// output and whether it exited 0.
func run(t *testing.T, p *Policy, dir, script string) (string, bool) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := Start(cmd, p); err != nil {
		t.Fatalf("Start: %v", err)
	}
	err := cmd.Wait()
	return buf.String(), err == nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// TestFilesystem: a sandboxed command writes in its working directory and
// temp dir, and nowhere else; it cannot read, move or overwrite denied
// paths.
func TestFilesystem(t *testing.T) {
	needLandlock(t)
	l := newLayout(t)
	key := filepath.Join(l.secret, "key")
	tests := []struct {
		name   string
		script string
		ok     bool
		check  func(t *testing.T, out string)
	}{
		{"write in cwd", "echo hi > src/made.txt && mkdir -p src/sub/dir && echo x > src/sub/dir/f && rm src/sub/dir/f && mv src/made.txt src/moved.txt", true, func(t *testing.T, _ string) {
			if !exists(filepath.Join(l.work, "src", "moved.txt")) {
				t.Error("src/moved.txt was not created")
			}
		}},
		// The working directory holds denied paths. With the mount step
		// they are bound read-only and the directory is granted whole;
		// with Landlock alone it is carved, and since one of its holes
		// is a directory, it gets no create right (see carve).
		{"create next to denied paths", "echo hi > made.txt", mountStepOn(), nil},
		{"write outside", "echo x > " + l.out + "/x", false, func(t *testing.T, _ string) {
			if exists(filepath.Join(l.out, "x")) {
				t.Error("a file outside the working directory was created")
			}
		}},
		{"mkdir outside", "mkdir " + l.out + "/d", false, func(t *testing.T, _ string) {
			if exists(filepath.Join(l.out, "d")) {
				t.Error("a directory outside was created")
			}
		}},
		{"write in temp dir", "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"", true, func(t *testing.T, out string) {
			if !exists(filepath.Join(l.tmp, "t")) || !strings.Contains(out, "t") {
				t.Errorf("temp file missing, output %q", out)
			}
		}},
		{"read denied", "cat " + key, false, func(t *testing.T, out string) {
			if strings.Contains(out, secretText) {
				t.Errorf("secret read: %q", out)
			}
		}},
		{"read denied through symlink", "ln -s " + key + " link && cat link", false, func(t *testing.T, out string) {
			if strings.Contains(out, secretText) {
				t.Errorf("secret read: %q", out)
			}
		}},
		{"move denied out", "mv " + key + " src/stolen; cat src/stolen", false, func(t *testing.T, out string) {
			if strings.Contains(out, secretText) || !exists(key) {
				t.Errorf("secret moved: %q", out)
			}
		}},
		{"link denied out", "ln " + key + " src/hard; cat src/hard", false, func(t *testing.T, out string) {
			if strings.Contains(out, secretText) {
				t.Errorf("secret read through a hard link: %q", out)
			}
		}},
		{"rename denied dir", "mv secrets public; cat public/key", false, func(t *testing.T, out string) {
			if strings.Contains(out, secretText) {
				t.Errorf("secret read after renaming its directory: %q", out)
			}
		}},
		{"overwrite write-denied", "echo evil > protected.txt", false, func(t *testing.T, _ string) {
			if b, _ := os.ReadFile(filepath.Join(l.work, "protected.txt")); string(b) != "keep" {
				t.Errorf("protected.txt is %q", b)
			}
		}},
		{"remove write-denied", "rm -f protected.txt", false, func(t *testing.T, _ string) {
			if !exists(filepath.Join(l.work, "protected.txt")) {
				t.Error("protected.txt was removed")
			}
		}},
		{"devices", "echo a > /dev/null && echo b >/dev/stdout && echo c >&2 && head -c1 /dev/zero >/dev/null", true, nil},
		{"read elsewhere", "cat /etc/hostname >/dev/null || cat /etc/passwd > /dev/null; ls / >/dev/null", true, nil},
		{"list denied dir names only", "ls secrets", true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := run(t, l.policy(), l.work, tt.script)
			if ok != tt.ok {
				t.Errorf("exit ok = %v, want %v; output:\n%s", ok, tt.ok, out)
			}
			if tt.check != nil {
				tt.check(t, out)
			}
		})
	}
}

// TestReadOnly: plan mode's policy lets the command write only in the
// temp dir.
func TestReadOnly(t *testing.T) {
	needLandlock(t)
	l := newLayout(t)
	p := l.policy()
	p.ReadOnly = true
	out, ok := run(t, p, l.work, "echo x > src/inside.txt")
	if ok || exists(filepath.Join(l.work, "src", "inside.txt")) {
		t.Errorf("read-only sandbox wrote in the working directory (ok=%v): %s", ok, out)
	}
	out, ok = run(t, p, l.work, "echo x > \"$TMPDIR/scratch\" && cat README 2>/dev/null; true")
	if !ok || !exists(filepath.Join(l.tmp, "scratch")) {
		t.Errorf("read-only sandbox could not use its temp dir: %s", out)
	}
}

// TestNoDenies: without denied paths the working directory is one tree:
// new entries at its top level are fine.
func TestNoDenies(t *testing.T) {
	needLandlock(t)
	l := newLayout(t)
	p := &Policy{WriteAllow: []string{l.work}, TempDir: l.tmp}
	if out, ok := run(t, p, l.work, "echo hi > made.txt && mkdir d && mv made.txt d/ && cat d/made.txt"); !ok {
		t.Errorf("writing in the working directory failed: %s", out)
	}
}

// TestDeniedStaysDenied: a read-denied file cannot be moved out of its
// directory by one command to be read by the next (whose rules are built
// from the tree as it is then).
func TestDeniedStaysDenied(t *testing.T) {
	needLandlock(t)
	l := newLayout(t)
	p := &Policy{WriteAllow: []string{l.work}, ReadDeny: []string{l.secret}, TempDir: l.tmp}
	run(t, p, l.work, "mv secrets/key stolen; cp secrets/key copied; mv secrets gone")
	out, _ := run(t, p, l.work, "cat stolen copied gone/key secrets/key 2>&1")
	if strings.Contains(out, secretText) {
		t.Errorf("secret read on the second command: %q", out)
	}
	if !exists(filepath.Join(l.secret, "key")) {
		t.Error("the denied file was moved")
	}
}

// sink is a loopback TCP listener that records whether anything reached
// it.
type sink struct {
	ln  net.Listener
	mu  sync.Mutex
	got []byte
	hit bool
}

func newSink(t *testing.T) *sink {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.hit = true
			s.mu.Unlock()
			go func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(2 * time.Second))
				b := make([]byte, 512)
				n, _ := c.Read(b)
				s.mu.Lock()
				s.got = append(s.got, b[:n]...)
				s.mu.Unlock()
			}()
		}
	}()
	return s
}

func (s *sink) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *sink) reached() (bool, string) {
	time.Sleep(100 * time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hit, string(s.got)
}

// TestNetwork: TCP reaches only the proxy port; UDP and other socket
// kinds are refused whatever the mode.
func TestNetwork(t *testing.T) {
	abi := needLandlock(t)
	if abi < minNetABI {
		t.Skipf("sandbox network tests skip: Landlock ABI %d has no TCP rules", abi)
	}
	l := newLayout(t)
	t.Run("tcp to a sink that is not the proxy", func(t *testing.T) {
		s, proxy := newSink(t), newSink(t)
		p := l.policy()
		p.Network, p.ProxyPort = NetProxy, proxy.port()
		out, ok := run(t, p, l.work, "echo leak > /dev/tcp/127.0.0.1/"+strconv.Itoa(s.port()))
		if hit, got := s.reached(); ok || hit {
			t.Errorf("connection reached the sink (exit ok %v, got %q): %s", ok, got, out)
		}
	})
	t.Run("tcp with no network", func(t *testing.T) {
		s := newSink(t)
		out, ok := run(t, l.policy(), l.work, "echo leak > /dev/tcp/127.0.0.1/"+strconv.Itoa(s.port()))
		if hit, _ := s.reached(); ok || hit {
			t.Errorf("connection reached the sink (exit ok %v): %s", ok, out)
		}
	})
	t.Run("tcp to the proxy port", func(t *testing.T) {
		proxy := newSink(t)
		p := l.policy()
		p.Network, p.ProxyPort = NetProxy, proxy.port()
		out, ok := run(t, p, l.work, "echo via-proxy > /dev/tcp/127.0.0.1/"+strconv.Itoa(proxy.port())+"; echo \"$HTTPS_PROXY\"")
		if hit, got := proxy.reached(); !ok || !hit || !strings.Contains(got, "via-proxy") {
			t.Errorf("the proxy port was not reachable (ok %v, got %q): %s", ok, got, out)
		}
		if !strings.Contains(out, "http://127.0.0.1:"+strconv.Itoa(proxy.port())) {
			t.Errorf("HTTPS_PROXY not set: %q", out)
		}
	})
	for _, mode := range []NetMode{NetNone, NetProxy} {
		t.Run("udp "+strconv.Itoa(int(mode)), func(t *testing.T) {
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			proxy := newSink(t)
			p := l.policy()
			p.Network, p.ProxyPort = mode, proxy.port()
			port := pc.LocalAddr().(*net.UDPAddr).Port
			out, ok := run(t, p, l.work, "echo leak > /dev/udp/127.0.0.1/"+strconv.Itoa(port))
			pc.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			b := make([]byte, 64)
			if n, _, err := pc.ReadFrom(b); err == nil || ok {
				t.Errorf("a datagram got out (exit ok %v, %q): %s", ok, b[:n], out)
			}
		})
	}
	t.Run("bind denied", func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 not found")
		}
		script := `python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print("bound")'`
		if out, ok := run(t, l.policy(), l.work, script); ok {
			t.Errorf("bind allowed without AllowLocalBinding: %s", out)
		}
		p := l.policy()
		p.AllowLocalBinding = true
		if out, ok := run(t, p, l.work, script); !ok {
			t.Errorf("bind refused with AllowLocalBinding: %s", out)
		}
	})
}

// TestParentUnrestricted: after many sandboxed starts, every thread of
// this process is still free: no no_new_privs, no seccomp filter, the
// process's mount namespace and mounts, and writes, metadata changes and
// connections that the children could not make succeed here.
func TestParentUnrestricted(t *testing.T) {
	needLandlock(t)
	if ok, err := MetadataProtected(); !ok {
		t.Logf("no mount namespace step here: %v", err)
	}
	l := newLayout(t)
	s := newSink(t)
	mntNS, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("true")
			if err := Start(cmd, l.policy()); err != nil {
				t.Errorf("start %d: %v", i, err)
				return
			}
			cmd.Wait()
		}()
	}
	wg.Wait()
	// Work on many threads, so that a tainted thread would be used.
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := filepath.Join(l.out, "parent"+strconv.Itoa(i))
			if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
				t.Errorf("parent write: %v", err)
			}
			if err := os.Chmod(f, 0o600); err != nil {
				t.Errorf("parent chmod: %v", err)
			}
			if err := os.Chtimes(f, time.Unix(981158400, 0), time.Unix(981158400, 0)); err != nil {
				t.Errorf("parent utimes: %v", err)
			}
			c, err := net.Dial("tcp", s.ln.Addr().String())
			if err != nil {
				t.Errorf("parent connect: %v", err)
				return
			}
			c.Close()
			u, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Errorf("parent udp: %v", err)
				return
			}
			u.Close()
		}()
	}
	wg.Wait()
	tasks, err := filepath.Glob("/proc/self/task/*/status")
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no threads listed: %v", err)
	}
	for _, st := range tasks {
		b, err := os.ReadFile(st)
		if err != nil {
			continue // the thread exited meanwhile
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) == 2 && (f[0] == "NoNewPrivs:" || f[0] == "Seccomp:") && f[1] != "0" {
				t.Errorf("%s (pid %d): %s", st, os.Getpid(), line)
			}
		}
		if ns, err := os.Readlink(filepath.Join(filepath.Dir(st), "ns", "mnt")); err == nil && ns != mntNS {
			t.Errorf("%s: mount namespace %s, the process's is %s", st, ns, mntNS)
		}
	}
	if now, err := os.ReadFile("/proc/self/mountinfo"); err != nil || string(now) != string(mounts) {
		t.Errorf("the process's mounts changed (%v):\nbefore:\n%s\nafter:\n%s", err, mounts, now)
	}
	t.Logf("%d threads checked", len(tasks))
}

// TestStartErrors: a bad policy starts nothing.
func TestStartErrors(t *testing.T) {
	needLandlock(t)
	for _, p := range []*Policy{
		nil,
		{WriteAllow: []string{"relative"}},
		{Network: NetProxy},
		{Network: 7},
	} {
		cmd := exec.Command("true")
		if err := Start(cmd, p); err == nil || cmd.Process != nil {
			t.Errorf("Start(%+v) = %v, process %v", p, err, cmd.Process)
		}
	}
	if _, err := Available(); errors.Is(err, ErrUnavailable) {
		t.Fatal("unreachable: skipped above")
	}
}

// TestRulesetCache: a cached ruleset serves only the same resolved policy,
// and is rebuilt once a directory it was built from changes, so that a
// file made since in a carved directory becomes usable.
func TestRulesetCache(t *testing.T) {
	needLandlock(t)
	l := newLayout(t)
	open := &Policy{WriteAllow: []string{l.work}, TempDir: l.tmp}
	if out, ok := run(t, open, l.work, "cat secrets/key"); !ok || !strings.Contains(out, secretText) {
		t.Fatalf("without a deny the secret is unreadable: %q", out)
	}
	denied := *open
	denied.ReadDeny = []string{l.secret}
	if out, _ := run(t, &denied, l.work, "cat secrets/key"); strings.Contains(out, secretText) {
		t.Errorf("a ruleset cached for another policy was used: %q", out)
	}
	run(t, l.policy(), l.work, "true")
	if err := os.WriteFile(filepath.Join(l.work, "new.txt"), []byte("fresh"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, ok := run(t, l.policy(), l.work, "cat new.txt"); !ok || !strings.Contains(out, "fresh") {
		t.Errorf("a file created in a carved directory since the last command is unreadable: %q", out)
	}
}

// TestNetAll: with NetAll the network is not restricted (UDP, TCP
// connect and bind work, no proxy variables are set), while the
// filesystem rules and the refusal of TIOCSTI are unchanged.
func TestNetAll(t *testing.T) {
	needLandlock(t)
	l := newLayout(t)
	all := func() *Policy {
		p := l.policy()
		p.Network = NetAll
		return p
	}
	if got, want := all().Env(), []string{"TMPDIR=" + l.tmp}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Env() = %q, want %q", got, want)
	}
	t.Run("udp", func(t *testing.T) {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		port := pc.LocalAddr().(*net.UDPAddr).Port
		out, ok := run(t, all(), l.work, "echo datagram > /dev/udp/127.0.0.1/"+strconv.Itoa(port))
		pc.SetReadDeadline(time.Now().Add(2 * time.Second))
		b := make([]byte, 64)
		n, _, err := pc.ReadFrom(b)
		if !ok || err != nil || !strings.Contains(string(b[:n]), "datagram") {
			t.Errorf("no datagram under NetAll (exit ok %v, %q, %v): %s", ok, b[:n], err, out)
		}
	})
	t.Run("tcp connect", func(t *testing.T) {
		s := newSink(t)
		out, ok := run(t, all(), l.work, "echo direct > /dev/tcp/127.0.0.1/"+strconv.Itoa(s.port()))
		if hit, got := s.reached(); !ok || !hit || !strings.Contains(got, "direct") {
			t.Errorf("TCP connect refused under NetAll (ok %v, got %q): %s", ok, got, out)
		}
	})
	t.Run("no proxy variables", func(t *testing.T) {
		cmd := exec.Command("bash", "-c", `echo "[${HTTPS_PROXY-}]"`)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		b, err := startAndWait(cmd, all())
		if err != nil || strings.TrimSpace(string(b)) != "[]" {
			t.Errorf("HTTPS_PROXY under NetAll: %q (%v)", b, err)
		}
	})
	t.Run("bind", func(t *testing.T) {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 not found")
		}
		script := `python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); t=socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(); print("bound")'`
		if out, ok := run(t, all(), l.work, script); !ok || !strings.Contains(out, "bound") {
			t.Errorf("bind refused under NetAll: %s", out)
		}
	})
	t.Run("tiocsti refused", func(t *testing.T) {
		if got := helperErrno(t, all(), "tiocsti"); got != "EPERM" {
			t.Errorf("TIOCSTI under NetAll: %s, want EPERM", got)
		}
		if got := helperErrno(t, nil, "tiocsti"); got == "EPERM" {
			t.Errorf("TIOCSTI unsandboxed: %s: the check cannot tell the filter's refusal apart", got)
		}
	})
	t.Run("filesystem", func(t *testing.T) {
		if out, ok := run(t, all(), l.work, "echo x > "+l.out+"/netall"); ok || exists(filepath.Join(l.out, "netall")) {
			t.Errorf("wrote outside under NetAll (ok %v): %s", ok, out)
		}
		if out, _ := run(t, all(), l.work, "cat secrets/key"); strings.Contains(out, secretText) {
			t.Errorf("read a denied file under NetAll: %q", out)
		}
		if out, ok := run(t, all(), l.work, "echo hi > src/netall.txt && echo x > \"$TMPDIR/t\" && echo y > /dev/null"); !ok {
			t.Errorf("writing in the working directory under NetAll failed: %s", out)
		}
	})
	t.Run("needs no TCP rules", func(t *testing.T) {
		p := all()
		if p.needsNetRules() || p.sockets() != socketsAny {
			t.Errorf("NetAll: needsNetRules %v, sockets %d", p.needsNetRules(), p.sockets())
		}
	})
}

// startAndWait starts cmd under p (unsandboxed when p is nil) and returns
// its combined output.
func startAndWait(cmd *exec.Cmd, p *Policy) ([]byte, error) {
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	var err error
	if p == nil {
		err = cmd.Start()
	} else {
		err = Start(cmd, p)
	}
	if err != nil {
		return nil, err
	}
	err = cmd.Wait()
	return buf.Bytes(), err
}

// helperErrno runs this test binary as TestHelperProcess doing what, under
// p, and returns the name of the errno it reported ("ok" for none).
func helperErrno(t *testing.T, p *Policy, what string, arg ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "SANDBOX_TEST_HELPER="+what, "SANDBOX_TEST_ARG="+strings.Join(arg, ""))
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdin = f
	out, err := startAndWait(cmd, p)
	if err != nil {
		t.Fatalf("helper %s: %v: %s", what, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "errno="); ok {
			return v
		}
	}
	t.Fatalf("helper %s printed no errno: %s", what, out)
	return ""
}
