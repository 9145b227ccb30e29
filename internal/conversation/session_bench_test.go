//go:build unix

package conversation_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// sessionOptions are the options of a session that loads nothing from
// disk: the default built-in tools, no settings files, no transcript.
func sessionOptions(b *testing.B, srv *agentlooptest.Server) *agentloop.Options {
	return &agentloop.Options{
		Provider:             provider(&testing.T{}, srv, nil),
		Cwd:                  b.TempDir(),
		SettingSources:       []settings.SettingSource{},
		NoSessionPersistence: true,
	}
}

// BenchmarkNewSession measures setting up a session the way Query and
// NewClient do (NewClient then Close, no turn): the per-session cost that
// issue 14 bounds at 100 µs CPU and 20 KiB.
func BenchmarkNewSession(b *testing.B) {
	srv := agentlooptest.NewServer()
	defer srv.Close()
	opts := sessionOptions(b, srv)
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		c, err := agentloop.NewClient(opts)
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time the process has used (user and system), in
// nanoseconds: unlike ns/op it does not count time the benchmark waits
// for a core on a loaded machine. It includes the garbage collector's work.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkNewSessionParallel is BenchmarkNewSession from GOMAXPROCS
// goroutines at once: contention on what sessions share.
func BenchmarkNewSessionParallel(b *testing.B) {
	srv := agentlooptest.NewServer()
	defer srv.Close()
	opts := sessionOptions(b, srv)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c, err := agentloop.NewClient(opts)
			if err != nil {
				b.Error(err)
				return
			}
			if err := c.Close(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkQueryOneTurn is a whole one-turn Query with the default tools
// and nothing from disk: session set-up, one request, close.
func BenchmarkQueryOneTurn(b *testing.B) {
	srv := agentlooptest.NewServer()
	defer srv.Close()
	srv.SetExhausted(agentlooptest.Text("Hello from the fake API."))
	opts := sessionOptions(b, srv)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := agentloop.Query(context.Background(), "hi", opts).Result(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdleClient keeps b.N Clients with the default options
// (transcripts on, under a temporary config directory) and no turn, and
// reports what each holds: live heap (heap-B/client, after a GC) and open
// descriptors (fds/client). bench/scale's idle mode measures the resident
// set of 100,000 in a fresh process (bench/scale/idle.sh).
func BenchmarkIdleClient(b *testing.B) {
	srv := agentlooptest.NewServer()
	defer srv.Close()
	opts := &agentloop.Options{Provider: provider(&testing.T{}, srv, nil), Cwd: b.TempDir(), ConfigDir: b.TempDir(),
		SettingSources: []settings.SettingSource{}}
	warm, err := agentloop.NewClient(opts) // what the process does once
	if err != nil {
		b.Fatal(err)
	}
	defer warm.Close()
	clients := make([]*agentloop.Client, 0, b.N)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	fds := func() int {
		ents, _ := os.ReadDir("/proc/self/fd")
		return len(ents)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fd0 := fds()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c, err := agentloop.NewClient(opts)
		if err != nil {
			b.Fatal(err)
		}
		clients = append(clients, c)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/float64(b.N), "heap-B/client")
	b.ReportMetric(float64(fds()-fd0)/float64(b.N), "fds/client")
	runtime.KeepAlive(clients)
}

// TestIdleClientsHoldNoGoroutines creates 100 clients that run nothing:
// an idle session must not keep a goroutine of its own (issue 14).
func TestIdleClientsHoldNoGoroutines(t *testing.T) {
	srv := agentlooptest.NewServer()
	defer srv.Close()
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(),
		SettingSources: []settings.SettingSource{}, NoSessionPersistence: true}
	before := runtime.NumGoroutine()
	var clients []*agentloop.Client
	for range 100 {
		c, err := agentloop.NewClient(opts)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	if got := runtime.NumGoroutine() - before; got > 0 {
		t.Errorf("100 idle clients hold %d goroutines, want 0", got)
	}
	for _, c := range clients {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestSessionsShareToolsConcurrently runs sessions from many goroutines at
// once, each calling the shared built-in Read and Grep tools (shared
// instances, shared compiled schemas, shared tool environment) with valid
// and invalid input. Under -race it proves what sessions share is not
// written while they run.
func TestSessionsShareToolsConcurrently(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "note.txt")
	if err := os.WriteFile(file, []byte("shared state\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewServer()
	defer srv.Close()
	// The first request of a session calls the tools; the second reports
	// what they answered.
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		results := r.ToolResults()
		if len(results) == 0 {
			return agentlooptest.Blocks(
				agentlooptest.ToolUseBlock("toolu_read", "Read", map[string]any{"file_path": file}),
				agentlooptest.ToolUseBlock("toolu_grep", "Grep", map[string]any{"pattern": "shared", "path": dir}),
				agentlooptest.ToolUseBlock("toolu_bad", "Read", map[string]any{"file_path": 7}),
			), true
		}
		var got []string
		for _, c := range results {
			errored := c.IsError != nil && *c.IsError
			got = append(got, fmt.Sprintf("%s:%t", c.ToolUseID, errored))
		}
		slices.Sort(got)
		return agentlooptest.Text(strings.Join(got, " ")), true
	})
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: dir,
		SettingSources: []settings.SettingSource{}, NoSessionPersistence: true}
	const want = "toolu_bad:true toolu_grep:false toolu_read:false"
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 3 {
				res, err := agentloop.Query(context.Background(), "go", opts).Result()
				if err != nil {
					t.Error(err)
					return
				}
				if got := finalText(res); got != want {
					t.Errorf("result %q, want %q", got, want)
					return
				}
			}
		})
	}
	wg.Wait()
}

func finalText(res *agentloop.ResultMessage) string {
	if res == nil || res.Result == nil {
		return "<none>"
	}
	return *res.Result
}

// TestSessionEnvironFollowsInputs: sessions share their tool environment
// only when its inputs are the same; a different Options.Env or process
// environment is seen by the next session's Bash command.
func TestSessionEnvironFollowsInputs(t *testing.T) {
	t.Setenv("MEMO_PROC", "p1")
	cwd := t.TempDir()
	srv := agentlooptest.NewServer()
	defer srv.Close()
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		if res, ok := r.ToolResult("toolu_1"); ok {
			return agentlooptest.Text(strings.TrimSpace(res.ResultText())), true
		}
		return agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo opt=$MEMO_OPT proc=$MEMO_PROC"}), true
	})
	steps := []struct {
		opt, proc string
	}{{"o1", "p1"}, {"o2", "p1"}, {"o1", "p1"}, {"o1", "p2"}, {"o1", "p2"}}
	var got, want []string
	for _, st := range steps {
		t.Setenv("MEMO_PROC", st.proc)
		res, err := agentloop.Query(context.Background(), "go", &agentloop.Options{
			Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Bash"}, AllowedTools: []string{"Bash"},
			SettingSources: []settings.SettingSource{}, NoSessionPersistence: true,
			Env: map[string]string{"MEMO_OPT": st.opt},
		}).Result()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, finalText(res))
		want = append(want, "opt="+st.opt+" proc="+st.proc)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Bash output per session (-want +got):\n%s", diff)
	}
}

// BenchmarkNewSessionSandbox is BenchmarkNewSession with the default
// sandbox (no sandbox setting) and with it turned off, measured in the
// same run: what the default sandbox costs a session that runs no
// command (issue 25).
func BenchmarkNewSessionSandbox(b *testing.B) {
	srv := agentlooptest.NewServer()
	defer srv.Close()
	for _, c := range []struct {
		name string
		sb   *agentloop.SandboxSettings
	}{{"off", &agentloop.SandboxSettings{}}, {"default", nil}} {
		b.Run(c.name, func(b *testing.B) {
			opts := sessionOptions(b, srv)
			opts.Sandbox = c.sb
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				cl, err := agentloop.NewClient(opts)
				if err != nil {
					b.Fatal(err)
				}
				if err := cl.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
