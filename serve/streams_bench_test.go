package serve_test

import (
	"bufio"
	"context"
	"flag"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/session/postgres"
)

// countingStore counts the reads of a store (Load), hiding its Watcher
// methods: streams on it poll.
type countingStore struct {
	session.Store
	reads *atomic.Int64
}

func (c countingStore) Load(ctx context.Context, k session.Key) ([]session.Entry, error) {
	c.reads.Add(1)
	return c.Store.Load(ctx, k)
}

// countingWatcher is countingStore with the Watcher methods (LoadFrom
// counted as a read).
type countingWatcher struct {
	countingStore
	w session.Watcher
}

func (c countingWatcher) Watch(ctx context.Context, k session.Key) (<-chan struct{}, error) {
	return c.w.Watch(ctx, k)
}

func (c countingWatcher) LoadFrom(ctx context.Context, k session.Key, from int) ([]session.Entry, error) {
	c.reads.Add(1)
	return c.w.LoadFrom(ctx, k, from)
}

// streamsFlag is BenchmarkNonHolderStreams's number of streams.
var streamsFlag = flag.Int("streams", 1000, "streams of BenchmarkNonHolderStreams")

// storeFlag is its store: memory, or postgres (the test database, a fresh
// table).
var storeFlag = flag.String("store", "memory", "store of BenchmarkNonHolderStreams: memory or postgres")

// BenchmarkNonHolderStreams follows N sessions (one stream each,
// -streams, 1000 by default) on a replica that holds none of them, while their
// holder (simulated: events appended to the store) publishes one event
// per session per second for 5 s, polling (the store is not a Watcher)
// and by notice (MemoryStore's Watch). It reports the p99 delay from an
// event's storing to its arrival on a stream, the store reads per second
// and the replica's CPU per second. scripts/bench-streams.sh runs it.
func BenchmarkNonHolderStreams(b *testing.B) {
	n := *streamsFlag
	for _, mode := range []string{"poll", "watch"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				benchStreams(b, mode, n)
			}
		})
	}
}

func benchStreams(b *testing.B, mode string, n int) {
	var reads atomic.Int64
	var backend interface {
		session.Store
		session.Watcher
	} = session.NewMemoryStore()
	if *storeFlag == "postgres" {
		pool := pgPool(b)
		pg, err := postgres.NewWithPool(context.Background(), pool, &postgres.Options{Table: pgTable(b, pool)})
		if err != nil {
			b.Fatal(err)
		}
		backend = pg
	}
	var store session.Store = countingStore{backend, &reads}
	if mode == "watch" {
		store = countingWatcher{countingStore{backend, &reads}, backend}
	}
	e := newEnvWith(b, agentlooptest.NewTB(b), store, func(c *serve.Config) { c.PollInterval = time.Second })
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.create(tokenA, map[string]any{})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var delays []time.Duration
	sent := sync.Map{} // "id/seq" -> time stored
	var ready sync.WaitGroup
	for _, id := range ids {
		ready.Add(1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", e.http.URL+"/v1/sessions/"+id+"/events", nil)
			req.Header.Set("Authorization", "Bearer "+tokenA)
			resp, err := http.DefaultClient.Do(req)
			ready.Done()
			if err != nil {
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			var seq string
			for sc.Scan() {
				line := sc.Text()
				if v, ok := strings.CutPrefix(line, "id: "); ok {
					seq = v
				}
				if strings.HasPrefix(line, "data: ") {
					if at, ok := sent.Load(id + "/" + seq); ok {
						d := time.Since(at.(time.Time))
						mu.Lock()
						delays = append(delays, d)
						mu.Unlock()
					}
				}
			}
		}()
	}
	ready.Wait()
	time.Sleep(1500 * time.Millisecond) // every stream made its first read
	reads.Store(0)
	cpu0 := cpuTime()
	start := time.Now()
	const rounds = 5
	for r := range rounds {
		round := time.Now()
		for _, id := range ids {
			seq := int64(r + 1)
			sent.Store(id+"/"+strconv.FormatInt(seq, 10), time.Now())
			if err := e.srv.AppendEventForTest("tenant-a", id, seq, "state", []byte(`{"state":"running"}`)); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(time.Until(round.Add(time.Second)))
	}
	time.Sleep(1500 * time.Millisecond) // the last events arrive
	elapsed := time.Since(start).Seconds()
	cpu := cpuTime() - cpu0
	cancel()
	mu.Lock()
	defer mu.Unlock()
	if len(delays) < rounds*n*9/10 {
		b.Fatalf("%d of %d events arrived", len(delays), rounds*n)
	}
	slices.Sort(delays)
	p99 := delays[len(delays)*99/100]
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(reads.Load())/elapsed, "store-reads/s")
	b.ReportMetric(cpu.Seconds()*1000/elapsed, "cpu-ms/s")
	b.ReportMetric(float64(len(delays))/float64(rounds*n)*100, "%delivered")
	b.Logf("%s: %d streams, p99 %v, %.0f store reads/s, %.0f cpu-ms/s", mode, n, p99, float64(reads.Load())/elapsed, cpu.Seconds()*1000/elapsed)
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
