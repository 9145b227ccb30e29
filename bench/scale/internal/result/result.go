// Package result is the scale benchmark's record: one JSON line per run in
// results.jsonl, read back by the chart and table tools.
package result

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// Modes of a run.
const (
	ModeInproc    = "inproc"    // N sessions as goroutines in one process
	ModeProcs     = "procs"     // N agentloop -p processes
	ModeReference = "reference" // N reference CLI processes
	// ModeSDKRunner is N goroutines each running anthropic-sdk-go's tool
	// runner with a Read tool of its own, in one process: the baseline of
	// the Go SDK on the same workload.
	ModeSDKRunner = "sdkrunner"
)

// Record is one run of the benchmark. A turn is one model request and its
// reply: a session of M tool turns makes M+1 turns. Fields that a mode
// cannot measure are zero and omitted.
type Record struct {
	Time      string  `json:"time"`              // start, RFC 3339 UTC
	Mode      string  `json:"mode"`              // inproc, procs, reference, sdkrunner
	Sessions  int     `json:"sessions"`          // N
	ToolTurns int     `json:"tool_turns"`        // M, tool calls per session
	LatencyMs float64 `json:"latency_ms"`        // the scripted model's delay per reply
	Parallel  int     `json:"parallel,omitzero"` // procs: processes running at once
	Cores     int     `json:"cores"`             // runtime.NumCPU of the benchmark process
	Persist   bool    `json:"persist"`           // transcripts written
	// H2C: the sessions spoke HTTP/2 without TLS to the scripted API,
	// many requests per connection (inproc -h2c); false is HTTP/1.1, one
	// connection per request in flight.
	H2C bool `json:"h2c,omitzero"`
	// TLS: the sessions spoke HTTPS to the scripted API, HTTP/2 chosen by
	// ALPN as against the real API (inproc -tls, sdkrunner -tls).
	TLS bool `json:"tls,omitzero"`
	// Workload is the script's tool calls: "mixed" (Read, Grep, Bash in
	// turn; empty in older records) or "read" (Read only).
	Workload string `json:"workload,omitempty"`
	// Client (inproc, sdkrunner) is "shipped" when each library ran on the
	// HTTP client it makes when given none (agentloop's provider: a pool of
	// 1,024 idle connections per host, small buffers; anthropic-sdk-go:
	// a clone of http.DefaultTransport, 2 idle connections per host), as a
	// program that does not tune it gets; empty when both ran on the
	// benchmark's transport (as many connections as sessions).
	Client string `json:"client,omitempty"`
	// HTTP2Share (inproc, sdkrunner) is the share of the messages
	// requests answered over HTTP/2.
	HTTP2Share float64 `json:"http2_share,omitzero"`
	// MemLimitMiB is the Go runtime's soft memory limit the benchmark
	// process ran under (inproc -memlimit; debug.SetMemoryLimit, as a host
	// sets GOMEMLIMIT); 0 is none, the default: the collector lets the
	// heap grow to twice what is live.
	MemLimitMiB int    `json:"memlimit_mib,omitzero"`
	Command     string `json:"command"` // the command line of the run
	// LoadBefore is the 1-minute load average when the run started: well
	// above 0 means other work shared the cores and wall-clock figures
	// (wall_s, turns_per_s, overhead, setup) are inflated.
	LoadBefore float64 `json:"load_before"`

	WallS     float64 `json:"wall_s"`      // from the first session's start to the last one's end
	Turns     int     `json:"turns"`       // turns completed (model replies consumed)
	TurnsPerS float64 `json:"turns_per_s"` // Turns / WallS
	Errors    int     `json:"errors"`      // sessions that did not end in a success result
	FirstErr  string  `json:"first_error,omitempty"`

	CPUS             float64 `json:"cpu_s"`                         // benchmark process(es) and their tool subprocesses
	CPUPerTurnMs     float64 `json:"cpu_per_turn_ms"`               // CPUS / Turns
	SelfCPUPerTurnMs float64 `json:"self_cpu_per_turn_ms,omitzero"` // inproc: without tool subprocesses (Bash)

	BaseRSSMiB         float64 `json:"base_rss_mib,omitzero"`              // inproc: before the first session
	PeakRSSMiB         float64 `json:"peak_rss_mib"`                       // inproc: process peak; procs: peak of the sum over live processes
	RSSPerInflightKiB  float64 `json:"rss_per_inflight_kib,omitzero"`      // inproc: (peak - base) / N
	IdleRSSPerSessKiB  float64 `json:"idle_rss_per_session_kib,omitzero"`  // inproc: RSS growth per idle Client
	IdleHeapPerSessKiB float64 `json:"idle_heap_per_session_kib,omitzero"` // inproc: live heap growth per idle Client
	ProcPeakRSSMeanMiB float64 `json:"proc_peak_rss_mean_mib,omitzero"`    // procs: mean of each process's peak RSS
	ProcPeakRSSMaxMiB  float64 `json:"proc_peak_rss_max_mib,omitzero"`     // procs: largest process peak RSS
	GoroutinesPeak     int     `json:"goroutines_peak,omitzero"`           // inproc
	// inproc, from runtime/metrics at the sample of the peak RSS (when the
	// 20 ms sampler saw it): the heap's objects, free slots in its spans,
	// free spans not yet returned, goroutine stacks, and the collector's
	// heap goal; and the largest live heap after a collection in the run.
	PeakHeapObjectsMiB float64 `json:"peak_heap_objects_mib,omitzero"`
	PeakHeapUnusedMiB  float64 `json:"peak_heap_unused_mib,omitzero"`
	PeakHeapFreeMiB    float64 `json:"peak_heap_free_mib,omitzero"`
	PeakStacksMiB      float64 `json:"peak_stacks_mib,omitzero"`
	PeakHeapGoalMiB    float64 `json:"peak_heap_goal_mib,omitzero"`
	LiveHeapMaxMiB     float64 `json:"live_heap_max_mib,omitzero"`
	OverheadP50Ms      float64 `json:"overhead_p50_ms,omitzero"` // inproc: loop overhead per turn, see main.go
	OverheadP99Ms      float64 `json:"overhead_p99_ms,omitzero"`
	SetupP50Ms         float64 `json:"setup_p50_ms,omitzero"` // inproc: Query call to first request sent
	SetupP99Ms         float64 `json:"setup_p99_ms,omitzero"`
	ServerCPUS         float64 `json:"server_cpu_s,omitzero"` // the scripted API process, when the run started it
	ServerPeakRSSMiB   float64 `json:"server_peak_rss_mib,omitzero"`

	// Where the CPU of the run went (inproc, sdkrunner; this process
	// alone, per turn): user and system time from getrusage, the minor
	// page faults (on a virtual machine a first touch of a page costs
	// microseconds, so resident memory shows in CPU), and from
	// runtime/metrics the bytes and objects allocated, the collections
	// and the collector's CPU as the runtime estimates it (mark assists,
	// dedicated and idle workers, sweeping; an estimate of wall time on
	// the cores it held, not a measure of CPU).
	UserCPUPerTurnMs float64 `json:"user_cpu_per_turn_ms,omitzero"`
	SysCPUPerTurnMs  float64 `json:"sys_cpu_per_turn_ms,omitzero"`
	FaultsPerTurn    float64 `json:"minor_faults_per_turn,omitzero"`
	AllocKiBPerTurn  float64 `json:"alloc_kib_per_turn,omitzero"`
	AllocsPerTurn    float64 `json:"allocs_per_turn,omitzero"`
	GCCycles         int     `json:"gc_cycles,omitzero"`
	GCCPUPerTurnMs   float64 `json:"gc_cpu_per_turn_ms,omitzero"`
}

// Now returns the time stamp format of Record.Time.
func Now() string { return time.Now().UTC().Format(time.RFC3339) }

// Append writes rec as one line at the end of the file at path.
func Append(path string, rec *Record) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("open results: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write results: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	return nil
}

// Read decodes the records of a results.jsonl stream; blank lines are
// skipped, a malformed line is an error naming its number.
func Read(r io.Reader) ([]Record, error) {
	var recs []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("results line %d: %w", n, err)
		}
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read results: %w", err)
	}
	return recs, nil
}

// ReadFile is Read of the file at path.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	return Read(f)
}

// ErrEmpty reports a percentile of no samples.
var ErrEmpty = errors.New("no samples")

// Percentile returns the p-th percentile (0 < p ≤ 100) of samples by the
// nearest-rank method: the smallest sample with at least p % of the samples
// at or below it. samples is sorted in place.
func Percentile(samples []float64, p float64) (float64, error) {
	if len(samples) == 0 {
		return 0, ErrEmpty
	}
	if p <= 0 || p > 100 {
		return 0, fmt.Errorf("percentile %v: want 0 < p <= 100", p)
	}
	slices.Sort(samples)
	rank := int(p/100*float64(len(samples)) + 0.999999999)
	rank = min(max(rank, 1), len(samples))
	return samples[rank-1], nil
}
