package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
)

// Issue 25, credentials: a Bash command, a command hook and a sandboxed
// command walk every ancestor's /proc entries (environ, cmdline, maps and
// mem) looking for agentloop's API key, as root where the test runs as
// root, and find nothing. With procguard off and the sandbox off (the
// mutation check) each of them finds the key.
//
// The key must not be in the test process, which is an ancestor too: it
// is made by a shell into a file the test reads only after the walks, the
// command is started through a shell that puts the key in its
// environment, and the scripted API, which sees the key in every request,
// runs in a process of its own (a sibling, not an ancestor).

// CRED_TEST_VERBOSE=1 in the environment logs what each walk was denied
// and found; =2 logs every entry it read too.

// keyPrefix starts the key; the walker looks for it followed by 32 hex
// digits, which nothing but the key has.
const keyPrefix = "sk-ant-e2e-walk-"

// fakeAPIEnv makes the test binary the scripted API of this test: it
// writes its address to the file the variable names and serves until
// killed.
const fakeAPIEnv = "AGENTLOOP_TEST_CRED_API"

// walkScript is the attacker: `bash walk.sh OUT STOP` walks up from its
// parent to PID 1. It reads environ, cmdline and maps of every ancestor,
// and the writable memory (where a key received at run time can be) of
// those up to STOP: the test process. No process above it ever held the
// key, and reading a CI runner's memory would take minutes.
const walkScript = `out=$1; stop=$2
pat='` + keyPrefix + `[0-9a-f]{32}'
exec >"$out" 2>&1
# memwalk reads every writable mapping of a process through its mem file
# (perl, part of every Debian: a dd per mapping takes minutes).
memwalk='
my ($pid, $pat) = @ARGV;
open(my $m, "<", "/proc/$pid/mem") or do { print "DENIED $pid mem\n"; exit };
open(my $maps, "<", "/proc/$pid/maps") or do { print "DENIED $pid mem (no maps)\n"; exit };
my $ok = 0;
while (<$maps>) {
  my ($r, $perm) = split;
  next unless $perm =~ /^rw/;
  my ($s, $e) = map { hex } split /-/, $r;
  next if $e - $s > 512 * 1024 * 1024;
  sysseek($m, $s, 0) or next;
  my ($left, $carry, $buf) = ($e - $s, "", "");
  while ($left > 0) {
    my $n = sysread($m, $buf, $left > 1048576 ? 1048576 : $left);
    last unless $n;
    $ok = 1; $left -= $n;
    my $d = $carry . $buf;
    while ($d =~ /($pat)/g) { print "FOUND $pid mem $1\n" }
    $carry = substr($d, -64);
  }
}
print $ok ? "READ $pid mem\n" : "DENIED $pid mem (nothing read)\n";
'
p=$PPID; n=0; inmem=1
while [ -n "$p" ] && [ "$p" -gt 1 ]; do
  n=$((n+1))
  for f in environ cmdline; do
    if data=$(tr '\0' '\n' 2>/dev/null < /proc/$p/$f); then
      echo "READ $p $f"
      grep -aoE "$pat" <<<"$data" | sed "s/^/FOUND $p $f /"
    else
      echo "DENIED $p $f"
    fi
  done
  maps=$(cat /proc/$p/maps 2>/dev/null)
  if [ -n "$maps" ]; then echo "READ $p maps"; else echo "DENIED $p maps"; fi
  [ "$inmem" = 1 ] && perl -e "$memwalk" "$p" "$pat"
  [ "$p" = "$stop" ] && inmem=0
  p=$(awk '/^PPid:/{print $2}' /proc/$p/status)
done
echo "WALKED $n"
`

// serveCredAPI is the scripted API of this test, run as its own process:
// an unsandboxed Bash walk, a sandboxed one, then an answer.
func serveCredAPI(addrFile string) {
	srv := agentlooptest.NewServer()
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		switch (len(r.Params.Messages) - 1) / 2 {
		case 0:
			return agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{
				"command": "bash ../walk.sh out-bash.txt " + os.Getenv("CRED_TEST_PID"), "dangerouslyDisableSandbox": true}), true
		case 1:
			return agentlooptest.ToolUse("toolu_2", "Bash", map[string]any{
				"command": "bash ../walk.sh out-sandboxed.txt " + os.Getenv("CRED_TEST_PID")}), true
		}
		return agentlooptest.Text("done"), true
	})
	if err := os.WriteFile(addrFile+".tmp", []byte(srv.URL), 0o600); err != nil {
		os.Exit(1)
	}
	os.Rename(addrFile+".tmp", addrFile)
	select {}
}

// startCredAPI starts the scripted API process and returns its URL.
func startCredAPI(t *testing.T, dir string) string {
	addrFile := filepath.Join(dir, "api-addr")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fakeAPIEnv+"="+addrFile, "CRED_TEST_PID="+strconv.Itoa(os.Getpid()))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil {
			u := string(b)
			host := strings.TrimPrefix(u, "http://")
			if c, err := net.Dial("tcp", host); err == nil {
				c.Close()
				return u
			}
		}
	}
	t.Fatal("the scripted API did not start")
	return ""
}

func TestCredentialsUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("an end-to-end battery of processes; go test without -short runs it")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the /proc walk is Linux's")
	}
	for _, prog := range []string{"bash", "perl"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("the walk needs %s", prog)
		}
	}
	for _, tc := range []struct {
		name     string
		mutation bool // procguard and the sandbox off: every walk must find the key
	}{{"defended", false}, {"mutation", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			work := filepath.Join(dir, "work")
			home := filepath.Join(dir, "home")
			for _, d := range []string{work, home} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "walk.sh"), []byte(walkScript), 0o755); err != nil {
				t.Fatal(err)
			}
			keyFile := filepath.Join(dir, "key")
			gen := exec.Command("sh", "-c", `printf '%s%s' "$0" "$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" > "$1"`, keyPrefix, keyFile)
			if out, err := gen.CombinedOutput(); err != nil {
				t.Fatalf("making the key: %v: %s", err, out)
			}
			url := startCredAPI(t, dir)

			sandbox := map[string]any{"enabled": !tc.mutation, "allowUnsandboxedCommands": true, "failIfUnavailable": false}
			walk := "bash ../walk.sh out-hook.txt " + strconv.Itoa(os.Getpid())
			settings, _ := json.Marshal(map[string]any{
				"sandbox": sandbox,
				"hooks": map[string]any{"SessionStart": []any{map[string]any{
					"hooks": []any{map[string]any{"type": "command", "command": walk}}}}},
			})
			debugFile := filepath.Join(dir, "debug.log")
			cmd := exec.Command("sh", "-c", `ANTHROPIC_API_KEY="$(cat "$1")"; export ANTHROPIC_API_KEY; shift; exec "$@"`,
				"sh", keyFile, os.Args[0], "-p", "walk", "--output-format", "stream-json", "--verbose",
				"--allowedTools", "Bash", "--settings", string(settings), "--debug-file", debugFile)
			cmd.Dir = work
			env := []string{runMainEnv + "=1", "ANTHROPIC_BASE_URL=" + url, "HOME=" + home}
			if tc.mutation {
				env = append(env, noProcguardEnv+"=1")
			}
			for _, kv := range os.Environ() {
				k, _, _ := strings.Cut(kv, "=")
				if k != "ANTHROPIC_API_KEY" && k != "ANTHROPIC_AUTH_TOKEN" && k != "HOME" {
					env = append(env, kv)
				}
			}
			cmd.Env = env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("agentloop: %v\nstderr: %s\nstdout: %s", err, stderr.String(), stdout.String())
			}

			// Only now does the test read the key.
			keyBytes, err := os.ReadFile(keyFile)
			if err != nil || len(keyBytes) != len(keyPrefix)+32 {
				t.Fatalf("key file: %q, %v", keyBytes, err)
			}
			key := string(keyBytes)
			for _, walker := range []string{"out-hook.txt", "out-bash.txt", "out-sandboxed.txt"} {
				out, err := os.ReadFile(filepath.Join(work, walker))
				if err != nil {
					t.Errorf("%s: %v (the walk did not run)\nstdout: %s", walker, err, stdout.String())
					continue
				}
				text := string(out)
				if os.Getenv("CRED_TEST_VERBOSE") != "" {
					t.Logf("%s:\n%s", walker, summary(text))
				}
				if !strings.Contains(text, "WALKED ") {
					t.Errorf("%s: the walk did not finish:\n%s", walker, text)
					continue
				}
				found := strings.Contains(text, key)
				switch {
				case tc.mutation && !found:
					t.Errorf("%s: without the defences the walk should find the key, and did not:\n%s", walker, summary(text))
				case !tc.mutation && found:
					t.Errorf("%s: the walk found the key:\n%s", walker, summary(text))
				}
				if !strings.Contains(text, "READ ") {
					t.Errorf("%s: the walk read nothing at all, so it proves nothing:\n%s", walker, summary(text))
				}
			}
			if tc.mutation {
				return
			}
			// Nor is the key written anywhere agentloop writes.
			for name, data := range map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()} {
				if bytes.Contains(data, keyBytes) {
					t.Errorf("the key is in agentloop's %s", name)
				}
			}
			filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || path == keyFile {
					return nil
				}
				if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, keyBytes) {
					t.Errorf("the key is in %s", path)
				}
				return nil
			})
			if b, err := os.ReadFile(debugFile); err != nil || len(b) == 0 {
				t.Errorf("no debug log to check (%v)", err)
			}
		})
	}
}

// summary keeps the lines of a walk that say what it found or was denied.
func summary(text string) string {
	var keep []string
	for _, l := range strings.Split(text, "\n") {
		if os.Getenv("CRED_TEST_VERBOSE") == "2" || !strings.HasPrefix(l, "READ ") {
			keep = append(keep, l)
		}
	}
	return fmt.Sprintf("%s\n(%d lines)", strings.Join(keep, "\n"), strings.Count(text, "\n"))
}
