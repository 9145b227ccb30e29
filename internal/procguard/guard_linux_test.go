//go:build linux

package procguard

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// childEnv selects what the test binary does when it runs as a child.
const childEnv = "PROCGUARD_TEST_CHILD"

// secretVar is the credential variable the hiding test uses.
const secretVar = "PROCGUARD_TEST_SECRET"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "hide":
		hideChild()
		return
	}
	os.Exit(m.Run())
}

// hideChild is a command's main: it hides the secret and reports what
// its process shows afterwards.
func hideChild() {
	if err := HideCredentials([]string{secretVar, "PROCGUARD_TEST_UNSET"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	environ, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	child, err := exec.Command("sh", "-c", "printf %s \"$"+secretVar+"\"").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(5)
	}
	out, _ := json.Marshal(map[string]any{
		"getenv":           os.Getenv(secretVar),
		"environ_has":      bytes.Contains(environ, []byte("s3cr3t-value")),
		"environ_names_it": bytes.Contains(environ, []byte(secretVar+"=")),
		"other_var_intact": os.Getenv("PROCGUARD_TEST_OTHER"),
		"child_gets":       string(child),
	})
	os.Stdout.Write(out)
	os.Exit(0)
}

// TestHideCredentials: after HideCredentials the kernel's copy of the
// environment no longer holds the secret; the Go process's copy does, and
// passes it on to a child as before (toolenv decides what tools get).
func TestHideCredentials(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=hide", secretVar+"=s3cr3t-value", "PROCGUARD_TEST_OTHER=kept")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v: %s", err, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("child said %q: %v", stdout.String(), err)
	}
	want := map[string]any{
		"getenv": "s3cr3t-value", "environ_has": false, "environ_names_it": true,
		"other_var_intact": "kept", "child_gets": "s3cr3t-value",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("after HideCredentials (-want +got):\n%s", d)
	}
}

// probe is a shell script run by a started child: it tries to read this
// test process's environ, mem and maps and prints one line per entry,
// "ok" or "denied".
const probe = `p=$1
for f in environ maps; do
  if cat /proc/$p/$f >/dev/null 2>&1; then echo "$f ok"; else echo "$f denied"; fi
done
addr=$(head -n1 /proc/$p/maps 2>/dev/null | cut -d- -f1)
if [ -n "$addr" ] && dd if=/proc/$p/mem bs=1 count=16 iflag=skip_bytes skip=$((16#$addr)) >/dev/null 2>&1; then echo "mem ok"; else echo "mem denied"; fi
grep CapBnd /proc/self/status | cut -f2
`

// runProbe starts the probe with Start and returns its lines.
func runProbe(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("bash", "-c", probe, "bash", strconv.Itoa(os.Getpid()))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v: %s", err, out.String())
	}
	return strings.Split(strings.TrimSpace(out.String()), "\n")
}

// capBits is the bounding set a probe printed, with the dropped
// capabilities' bits.
func capBits(t *testing.T, hex string) (set uint64, droppedBits uint64) {
	v, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		t.Fatalf("CapBnd %q: %v", hex, err)
	}
	for _, c := range dropped {
		droppedBits |= 1 << c
	}
	return v, droppedBits
}

// TestStartedProcessCannotReadUs runs as root as well as not: a process
// started with Start reads none of this process's environ, maps or mem,
// and its bounding set lacks the dropped capabilities. With the measures
// off (the mutation check), a root child reads all three.
func TestStartedProcessCannotReadUs(t *testing.T) {
	lines := runProbe(t)
	if d := cmp.Diff([]string{"environ denied", "maps denied", "mem denied"}, lines[:3]); d != "" {
		t.Errorf("what a started process read of us (-want +got):\n%s", d)
	}
	if !Protected() {
		t.Error("the process is still dumpable after Start")
	}
	if os.Geteuid() == 0 {
		set, bits := capBits(t, lines[3])
		if set&bits != 0 {
			t.Errorf("child's bounding set %x still holds %x", set, set&bits)
		}
	}
}

// TestMutationWithoutMeasures: the probe does read us when the measures
// are off, so TestStartedProcessCannotReadUs can fail. Only as root, where
// the child may read a dumpable process of the same user anyway.
func TestMutationWithoutMeasures(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root reads a process that is not its child's parent in every configuration")
	}
	SetDisabledForTest(true)
	defer SetDisabledForTest(false)
	// Dumpable again for the check; Start will not change it while off.
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	defer unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	lines := runProbe(t)
	if d := cmp.Diff([]string{"environ ok", "maps ok", "mem ok"}, lines[:3]); d != "" {
		t.Errorf("without the measures the probe should read us (-want +got):\n%s", d)
	}
}

// TestHostKeepsCapabilities: the launching threads' dropped capabilities
// do not spread to the rest of the process, however many starts run at
// once.
func TestHostKeepsCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to hold the capabilities")
	}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			cmd := exec.Command("/bin/true")
			if err := Start(cmd); err != nil {
				t.Error(err)
				return
			}
			cmd.Wait()
		})
	}
	wg.Wait()
	// A plain exec from an ordinary thread keeps the full bounding set.
	for range 16 {
		out, err := exec.Command("/bin/sh", "-c", "grep CapBnd /proc/self/status | cut -f2").Output()
		if err != nil {
			t.Fatal(err)
		}
		set, bits := capBits(t, strings.TrimSpace(string(out)))
		if set&bits != bits {
			t.Fatalf("a plain child's bounding set %x lacks %x: the drop spread", set, bits&^set)
		}
	}
}
