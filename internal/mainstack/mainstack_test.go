package mainstack

import (
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

// childEnv makes the test binary a child that calls reserve on a fresh
// goroutine under the stack limit the variable holds, in bytes.
const childEnv = "MAINSTACK_TEST_LIMIT"

func TestMain(m *testing.M) {
	if v := os.Getenv(childEnv); v != "" {
		limit, err := strconv.Atoi(v)
		if err != nil {
			os.Exit(3)
		}
		debug.SetMaxStack(limit)
		done := make(chan struct{})
		go func() { reserve(); close(done) }()
		<-done
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestReserveGrowsTheStack checks that reserve's frame is really there:
// the compiler drops an array it can see is unused, and then importing the
// package grows nothing. Under an 8 KiB stack limit a fresh goroutine that
// calls reserve must overflow; under 32 KiB it must not.
func TestReserveGrowsTheStack(t *testing.T) {
	for _, tc := range []struct {
		limit    int
		overflow bool
	}{
		{8 << 10, true},
		{32 << 10, false},
	} {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), childEnv+"="+strconv.Itoa(tc.limit))
		out, err := cmd.CombinedOutput()
		overflowed := err != nil && strings.Contains(string(out), "stack exceeds")
		if overflowed != tc.overflow {
			t.Errorf("reserve under a %d-byte stack limit: overflow %v, want %v (err %v)\n%s", tc.limit, overflowed, tc.overflow, err, out)
		}
	}
}
