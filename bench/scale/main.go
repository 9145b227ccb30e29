// Command scale is agentloop's many-sessions benchmark: N concurrent
// sessions of M tool turns each against the scripted Messages API of
// bench/scale/server (package agentlooptest in a process of its own), with
// real tools on a generated fixture tree: Read of a file, Grep over the
// tree, Bash echo, in turn, then a text answer. It appends one JSON record
// per run to -out; bench/scale/chart draws them and run.sh runs a matrix.
//
// Modes:
//
//   - inproc: N goroutines in this process, each running agentloop.Query
//     (default tools, permissions bypassed, no settings files, one shared
//     provider whose transport keeps up to N idle connections) and
//     draining its stream. All N start at once. Over HTTP/1.1 each request
//     in flight holds a connection (two file descriptors on loopback, one
//     per process); with -h2c the provider speaks HTTP/2 without TLS to a
//     server started with -h2c, requests sharing connections (up to 250
//     streams each) as agentloop's do over TLS against the real API. (Over
//     h2c net/http dials a connection for each request that finds none
//     idle, so the simultaneous start still opens thousands; see
//     newProvider.)
//   - procs: N "agentloop -p" processes (-agentloop-bin), at most -parallel
//     at a time.
//   - reference: the same with the reference CLI (-reference-bin).
//   - sdkrunner: as inproc, but each goroutine runs anthropic-sdk-go's tool
//     runner (BetaToolRunner, the whole history in each request) with a
//     Read tool of its own: the Go SDK's baseline on the same workload
//     (needs -workload read). sdkcompare.sh runs it beside inproc.
//
// -workload read makes every tool call a Read (the default, mixed, rotates
// Read, Grep and Bash). -tls (inproc, sdkrunner) serves the scripted API
// over HTTPS with a certificate made for the run, so the sessions speak
// HTTP/2 chosen by ALPN, as against the real API.
//
// What the numbers mean (fields of result.Record):
//
//   - turn: one model request and its reply. A session makes M+1 turns (M
//     tool calls, then the answer). turns is the number completed and
//     turns_per_s is turns / wall_s, wall_s running from the start of the
//     first session to the end of the last.
//   - cpu_s: CPU time (user + system, getrusage) over the run, of this
//     process and of its tool subprocesses (Bash) in inproc mode, of the
//     session processes and theirs in procs and reference modes; never of
//     the scripted API. cpu_per_turn_ms is cpu_s / turns, session set-up
//     included. self_cpu_per_turn_ms (inproc) leaves out the tool
//     subprocesses: it is the agent loop, its HTTP client and the
//     in-process tools (Read, Grep).
//   - peak_rss_mib: inproc, the process's peak resident set (the larger of
//     getrusage's maxrss and VmRSS polled every 20 ms); procs, the peak of
//     the summed VmRSS of the live session processes, polled every 50 ms.
//     rss_per_inflight_kib (inproc) is (peak − RSS before the first session)
//     / N: the memory one running session costs.
//   - idle_rss_per_session_kib, idle_heap_per_session_kib (inproc): in a
//     fresh process (this program again, -mode idle), the growth of VmRSS
//     and of the live heap (after a GC) per agentloop.Client created with
//     the same options and not queried, one warm-up Client left out.
//   - proc_peak_rss_mean_mib, proc_peak_rss_max_mib (procs): each session
//     process's own peak (maxrss from wait4).
//   - goroutines_peak (inproc): the most goroutines seen while polling.
//   - overhead_p50_ms, overhead_p99_ms (inproc): loop overhead per tool
//     turn, by wall clock in this process: the time from the end of reply
//     k−1 (its body read to EOF by the HTTP transport) to request k being
//     handed to the transport (its body already encoded), less the time the
//     tool of reply k−1 ran (from when the reply's tool call reached the
//     stream's consumer to when the tool's result did). It is everything the
//     loop does between two model calls that is not the tool: decoding the
//     reply's end, permission checks, building the tool result, yielding
//     messages, transcript writes, encoding the next request, and waiting
//     for a core when the cores are busy. setup_p50_ms and setup_p99_ms are
//     the time from Query being called to the first request being sent.
//   - load_before: the 1-minute load average when the run started; other
//     work on the machine inflates every wall-clock figure.
//   - server_cpu_s, server_peak_rss_mib: the scripted API process, when the
//     run started it (not counted anywhere else).
//   - where the CPU went (inproc, sdkrunner; this process, per turn):
//     user_cpu_per_turn_ms and sys_cpu_per_turn_ms (getrusage),
//     minor_faults_per_turn (a first touch of a page; on a virtual
//     machine each costs microseconds of system time, so resident memory
//     shows in CPU), alloc_kib_per_turn and allocs_per_turn (bytes and
//     objects allocated, runtime/metrics), gc_cycles over the run and
//     gc_cpu_per_turn_ms (the runtime's estimate of the collector's CPU:
//     comparable between two runs, not with getrusage).
//
// The model's latency (-latency) is a delay before each reply starts; its
// replies then stream at once.
//
// -memlimit runs the in-process sessions under a soft memory limit
// (debug.SetMemoryLimit, what a host sets with GOMEMLIMIT): the garbage
// collector then works harder as the heap nears the limit instead of
// letting it grow to twice what is live, trading CPU for peak RSS.
package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/agentloop/agentloop/bench/scale/internal/result"
	"github.com/agentloop/agentloop/bench/scale/internal/script"
)

// clientShipped is -client's one value.
const clientShipped = "shipped"

// config is the run's flags and what main derived from them.
type config struct {
	mode         string
	sessions     int
	turns        int
	latency      time.Duration
	parallel     int
	serverURL    string
	serverBin    string
	agentloopBin string
	referenceBin string
	fixture      string
	configDir    string
	out          string
	prompt       string
	persist      bool
	// h2c: the inproc sessions talk HTTP/2 without TLS to the server
	// (started with -h2c), as they would talk HTTP/2 over TLS to the API.
	h2c bool
	// tls: the sessions speak HTTPS to the server (started with a
	// certificate made for the run, tlsCert and tlsKey), HTTP/2 by ALPN.
	tls             bool
	tlsCert, tlsKey string
	tlsRoots        *x509.CertPool
	workload        string
	// client: "" runs the sessions on newTransport's transport (as many
	// connections as sessions); clientShipped on the one each library
	// makes when given no client.
	client  string
	idle    bool
	timeout time.Duration
	// profileDir, when set, receives cpu.pprof for the whole inproc run
	// and heap.pprof and goroutine.pprof taken at profileAt after the
	// sessions start (inproc only).
	profileDir string
	profileAt  time.Duration
	// memLimitMiB, when set, is the soft memory limit of this process
	// (debug.SetMemoryLimit), for inproc runs.
	memLimitMiB int
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run() error {
	var cfg config
	flag.StringVar(&cfg.mode, "mode", result.ModeInproc, "inproc, sdkrunner, procs or reference (idle is internal)")
	flag.IntVar(&cfg.sessions, "sessions", 100, "concurrent sessions N")
	flag.IntVar(&cfg.turns, "turns", 5, "tool turns M per session")
	flag.DurationVar(&cfg.latency, "latency", 0, "model latency, for the server this program starts (and the record)")
	flag.IntVar(&cfg.parallel, "parallel", 2*runtime.NumCPU(), "procs, reference: processes at once")
	flag.StringVar(&cfg.serverURL, "server", "", "base URL of a running bench/scale/server (started with the same -fixture, -turns and -latency); empty: start one")
	flag.StringVar(&cfg.serverBin, "server-bin", "", "the server binary to start; empty: \"server\" next to this program")
	flag.StringVar(&cfg.agentloopBin, "agentloop-bin", "", "procs: the agentloop CLI binary")
	flag.StringVar(&cfg.referenceBin, "reference-bin", "", "reference: the reference CLI binary; absent means the run is skipped")
	flag.StringVar(&cfg.fixture, "fixture", "", "fixture tree; empty: a temporary one")
	flag.StringVar(&cfg.configDir, "config-dir", "", "config directory of the sessions; empty: a temporary one")
	flag.StringVar(&cfg.out, "out", "results.jsonl", "results file to append the run's record to")
	flag.StringVar(&cfg.prompt, "prompt", "Look around the project and tell me what it does.", "every session's prompt")
	flag.BoolVar(&cfg.persist, "persist", false, "write session transcripts (under -config-dir)")
	flag.BoolVar(&cfg.h2c, "h2c", false, "inproc: speak HTTP/2 without TLS to the server (started with -h2c; with -server, start it so), multiplexing requests on few connections as against the real API")
	flag.BoolVar(&cfg.tls, "tls", false, "inproc, sdkrunner: speak HTTPS to the server, HTTP/2 chosen by ALPN as against the real API (the server is started with a certificate made for the run; not with -server)")
	flag.StringVar(&cfg.workload, "workload", script.WorkloadMixed, "the tool calls of the script: mixed (Read, Grep, Bash in turn) or read (Read only; sdkrunner needs it)")
	flag.StringVar(&cfg.client, "client", "", "inproc, sdkrunner: \"shipped\" runs each library on the HTTP transport it makes when given none (agentloop: 1,024 idle connections per host; anthropic-sdk-go: http.DefaultTransport's 2); empty: both on the benchmark's, as many connections as sessions")
	flag.BoolVar(&cfg.idle, "idle", true, "inproc: also measure idle sessions, in a child process")
	flag.DurationVar(&cfg.timeout, "timeout", 15*time.Minute, "the whole run's limit")
	flag.StringVar(&cfg.profileDir, "profile-dir", "", "inproc: write cpu.pprof, and heap.pprof and goroutine.pprof at -profile-at, there")
	flag.DurationVar(&cfg.profileAt, "profile-at", 2*time.Second, "inproc: when to take the heap and goroutine profiles; 0: none, and a CPU profile without the finer allocation sampling they need")
	flag.IntVar(&cfg.memLimitMiB, "memlimit", 0, "inproc: the Go runtime's soft memory limit for this process, in MiB (as GOMEMLIMIT); 0: none")
	flag.Parse()
	if cfg.sessions < 1 || cfg.turns < 0 || cfg.parallel < 1 {
		return errors.New("-sessions and -parallel must be at least 1, -turns at least 0")
	}
	inproc := cfg.mode == result.ModeInproc || cfg.mode == result.ModeSDKRunner
	if cfg.h2c && !inproc && cfg.mode != "idle" {
		return errors.New("-h2c is for -mode inproc and sdkrunner: the session processes of the other modes speak HTTP/1.1 to an http:// URL")
	}
	switch {
	case cfg.tls && !inproc:
		return errors.New("-tls is for -mode inproc and sdkrunner")
	case cfg.tls && cfg.h2c:
		return errors.New("-tls and -h2c: choose one")
	case cfg.tls && cfg.serverURL != "":
		return errors.New("-tls starts its own server: drop -server")
	case cfg.workload != script.WorkloadMixed && cfg.workload != script.WorkloadRead:
		return fmt.Errorf("-workload %q: want mixed or read", cfg.workload)
	case cfg.client != "" && cfg.client != clientShipped:
		return fmt.Errorf("-client %q: want shipped or nothing", cfg.client)
	case cfg.client != "" && !inproc:
		return errors.New("-client is for -mode inproc and sdkrunner")
	case cfg.client != "" && cfg.h2c:
		return errors.New("-client shipped speaks HTTP/1.1 or, with -tls, HTTP/2 by ALPN; not -h2c")
	case cfg.mode == result.ModeSDKRunner && cfg.workload != script.WorkloadRead:
		return errors.New("-mode sdkrunner has a Read tool only: use -workload read")
	}
	switch {
	case cfg.memLimitMiB < 0:
		return errors.New("-memlimit must be 0 (none) or a size in MiB")
	case cfg.memLimitMiB > 0 && !inproc:
		return errors.New("-memlimit is for -mode inproc and sdkrunner")
	case cfg.memLimitMiB > 0:
		debug.SetMemoryLimit(int64(cfg.memLimitMiB) << 20)
	}

	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	cleanup, err := prepare(&cfg)
	defer cleanup()
	if err != nil {
		return err
	}
	if cfg.mode == "idle" {
		return runIdle(&cfg)
	}
	if cfg.tls {
		dir, err := os.MkdirTemp("", "agentloop-scale-tls-")
		if err != nil {
			return fmt.Errorf("certificate directory: %w", err)
		}
		defer os.RemoveAll(dir)
		if cfg.tlsCert, cfg.tlsKey, cfg.tlsRoots, err = selfSignedCert(dir); err != nil {
			return err
		}
	}
	if cfg.mode == result.ModeReference && cfg.referenceBin == "" {
		fmt.Fprintln(os.Stderr, "scale: no -reference-bin; reference run skipped")
		return nil
	}

	rec := &result.Record{
		Time: result.Now(), Mode: cfg.mode, Sessions: cfg.sessions, ToolTurns: cfg.turns,
		LatencyMs: ms(cfg.latency), Cores: runtime.NumCPU(), Persist: cfg.persist,
		Command: strings.Join(os.Args, " "), LoadBefore: loadAverage(), H2C: cfg.h2c, MemLimitMiB: cfg.memLimitMiB,
		TLS: cfg.tls,
	}
	if cfg.workload != script.WorkloadMixed {
		rec.Workload = cfg.workload
	}
	rec.Client = cfg.client
	var srv *serverProc
	if cfg.serverURL == "" {
		if srv, err = startServer(ctx, &cfg); err != nil {
			return err
		}
		cfg.serverURL = srv.url
	}
	err = measure(ctx, &cfg, rec)
	if srv != nil {
		cpu, rss, serr := srv.stop()
		rec.ServerCPUS, rec.ServerPeakRSSMiB = cpu.Seconds(), toMiB(rss)
		err = errors.Join(err, serr)
	}
	if err != nil {
		return err
	}
	fmt.Printf("%s N=%d M=%d latency=%v h2c=%v tls=%v workload=%s: %.2fs, %d turns, %.0f turns/s, %d errors, %.3f ms CPU/turn, peak %.1f MiB\n",
		rec.Mode, rec.Sessions, rec.ToolTurns, cfg.latency, cfg.h2c, cfg.tls, cfg.workload, rec.WallS, rec.Turns, rec.TurnsPerS, rec.Errors,
		rec.CPUPerTurnMs, rec.PeakRSSMiB)
	if rec.FirstErr != "" {
		fmt.Println("first error:", rec.FirstErr)
	}
	return result.Append(cfg.out, rec)
}

// measure runs the mode's load.
func measure(ctx context.Context, cfg *config, rec *result.Record) error {
	switch cfg.mode {
	case result.ModeInproc:
		if cfg.idle {
			if err := measureIdle(ctx, cfg, rec); err != nil {
				return err
			}
		}
		stop, err := startProfiles(ctx, cfg)
		if err != nil {
			return err
		}
		defer stop()
		return runInproc(ctx, cfg, rec)
	case result.ModeSDKRunner:
		stop, err := startProfiles(ctx, cfg)
		if err != nil {
			return err
		}
		defer stop()
		return runSDKRunner(ctx, cfg, rec)
	case result.ModeProcs:
		return runProcs(ctx, cfg, cfg.agentloopBin, rec)
	case result.ModeReference:
		return runProcs(ctx, cfg, cfg.referenceBin, rec)
	}
	return fmt.Errorf("unknown -mode %q", cfg.mode)
}

// prepare creates the fixture tree and config directory the flags leave
// to the program; cleanup removes them.
func prepare(cfg *config) (cleanup func(), err error) {
	var tmp string
	cleanup = func() {
		if tmp != "" {
			os.RemoveAll(tmp)
		}
	}
	if cfg.fixture != "" && cfg.configDir != "" {
		cfg.fixture, err = filepath.Abs(cfg.fixture)
		return cleanup, err
	}
	if tmp, err = os.MkdirTemp("", "agentloop-scale-"); err != nil {
		return cleanup, fmt.Errorf("temporary directory: %w", err)
	}
	if cfg.configDir == "" {
		cfg.configDir = filepath.Join(tmp, "config")
		if err := os.Mkdir(cfg.configDir, 0o755); err != nil {
			return cleanup, fmt.Errorf("config directory: %w", err)
		}
	}
	if cfg.fixture == "" {
		if cfg.fixture, err = script.WriteFixture(filepath.Join(tmp, "tree")); err != nil {
			return cleanup, err
		}
	} else if cfg.fixture, err = filepath.Abs(cfg.fixture); err != nil {
		return cleanup, fmt.Errorf("fixture: %w", err)
	}
	return cleanup, nil
}
