package temporal

import (
	"context"
	"flag"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/uuid"
)

// benchSessions is how many sessions one benchmark op runs at once
// (scripts/bench-temporal.sh passes 1000).
var benchSessions = flag.Int("sessions", 50, "concurrent sessions per op of BenchmarkSessions")

// benchTurns is the number of model turns of a benchmark session: four
// Glob calls and an answer.
const benchTurns = 5

// BenchmarkSessions runs -sessions concurrent sessions of benchTurns
// turns, in-process (agentloop.Query, the baseline) and durably
// (temporal.Query over two workers on an in-process Temporal server),
// against a scripted Messages API with no added latency. Everything runs
// in this process (the API, the Temporal server, the workers), so
// cpu-ms/turn counts all of it in both cases. It reports turns/s, the
// process's CPU per turn, and the mean wall time of a turn as a session
// sees it.
func BenchmarkSessions(b *testing.B) {
	for _, mode := range []string{"inprocess", "temporal"} {
		b.Run(mode, func(b *testing.B) {
			srv := agentlooptest.NewTB(b)
			srv.SetRouter(benchRouter)
			base := workerOptions(b, srv)
			base.Tools = []string{"Glob"}
			run := func(ctx context.Context, cwd string) error {
				o := *base
				o.Cwd = cwd
				_, err := agentloop.Query(ctx, "Look around.", &o).Result()
				return err
			}
			if mode == "temporal" {
				c := startWorkers(b, base, 2)
				// Sessions start 32 at a time: a thousand starts at
				// once time out against a server that shares two cores
				// with everything else here. They run concurrently.
				starting := make(chan struct{}, 32)
				run = func(ctx context.Context, cwd string) error {
					starting <- struct{}{}
					s, err := Open(ctx, c, testQueue, &agentloop.Options{SessionID: uuid.NewString(), Cwd: cwd}, nil)
					<-starting
					if err != nil {
						return err
					}
					if _, err := s.Query(ctx, "Look around.").Result(); err != nil {
						return err
					}
					return s.Close(ctx)
				}
			}
			cwd := b.TempDir()
			n := *benchSessions
			var wall time.Duration
			cpu0 := processCPU()
			b.ResetTimer()
			for range b.N {
				var wg sync.WaitGroup
				var mu sync.Mutex
				var firstErr error
				for range n {
					wg.Go(func() {
						start := time.Now()
						err := run(context.Background(), cwd)
						mu.Lock()
						wall += time.Since(start)
						if err != nil && firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
					})
				}
				wg.Wait()
				if firstErr != nil {
					b.Fatal(firstErr)
				}
			}
			b.StopTimer()
			turns := float64(b.N * n * benchTurns)
			b.ReportMetric(turns/b.Elapsed().Seconds(), "turns/s")
			b.ReportMetric(float64((processCPU()-cpu0).Milliseconds())/turns, "cpu-ms/turn")
			b.ReportMetric(float64(wall.Milliseconds())/turns, "ms/turn")
		})
	}
}

// benchRouter answers a benchmark session's requests by how far its
// history has got: a Glob call for each of the first turns, then text.
func benchRouter(req *agentlooptest.Request) (agentlooptest.Reply, bool) {
	turn := (len(req.Params.Messages) + 1) / 2
	if turn < benchTurns {
		return agentlooptest.ToolUse(fmt.Sprintf("toolu_%d", turn), "Glob", map[string]any{"pattern": "*.go"}), true
	}
	return agentlooptest.Text("done"), true
}

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
