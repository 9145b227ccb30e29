// Command serveload is the load test of agentloop serve: N clients, each
// with a session of its own, hold N event streams open on one replica at
// once, then each sends one message and reads its turn to the result. It
// reports the time from a message's POST to the first event of its turn on
// the client's stream (p50, p99, max), the time to the result, errors, and
// the server process's peak RSS and CPU time.
//
// It starts everything it needs on loopback and stops by itself: the
// scripted Messages API (bench/scale/server, one text reply per request
// after -latency), and `agentloop serve` (-agentloop-bin) with a tokens
// file of one tenant without limits. The whole run is bounded by -timeout.
//
//	go build -o /tmp/al ./cmd/agentloop && (cd bench && go build -o /tmp/ ./scale/server ./serveload)
//	/tmp/serveload -agentloop-bin /tmp/al -server-bin /tmp/server -clients 1000
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
}

type config struct {
	clients   int
	latency   time.Duration
	timeout   time.Duration
	agentloop string
	server    string
	out       string
}

func run() error {
	var cfg config
	flag.IntVar(&cfg.clients, "clients", 1000, "concurrent clients, each with a session and an open event stream")
	flag.DurationVar(&cfg.latency, "latency", 200*time.Millisecond, "the scripted model's delay before each reply")
	flag.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "the whole run's limit")
	flag.StringVar(&cfg.agentloop, "agentloop-bin", "", "the agentloop binary (required)")
	flag.StringVar(&cfg.server, "server-bin", "", "bench/scale/server binary (required)")
	flag.StringVar(&cfg.out, "out", "", "append the run's record (JSON) to this file; empty: print only")
	flag.Parse()
	if cfg.agentloop == "" || cfg.server == "" || cfg.clients < 1 {
		return errors.New("-agentloop-bin and -server-bin are required, -clients at least 1")
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
	defer cancel()
	work, err := os.MkdirTemp("", "serveload")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	api, err := startProc(ctx, cfg.server, nil, "-turns", "0", "-latency", cfg.latency.String(), "-fixture", work)
	if err != nil {
		return fmt.Errorf("scripted API: %w", err)
	}
	defer api.stop()

	const token = "serveload-token"
	sum := sha256.Sum256([]byte(token))
	tokens := fmt.Sprintf(`{"tokens":[{"sha256":%q,"tenant":"load"}]}`, hex.EncodeToString(sum[:]))
	tokensFile := filepath.Join(work, "tokens.json")
	if err := os.WriteFile(tokensFile, []byte(tokens), 0o600); err != nil {
		return err
	}
	for _, d := range []string{"root", "data", "home"} {
		if err := os.MkdirAll(filepath.Join(work, d), 0o755); err != nil {
			return err
		}
	}
	env := []string{"ANTHROPIC_BASE_URL=" + api.url, "ANTHROPIC_API_KEY=sk-load", "HOME=" + filepath.Join(work, "home")}
	srv, err := startProc(ctx, cfg.agentloop, env, "serve", "--addr", "127.0.0.1:0", "--root", filepath.Join(work, "root"),
		"--data-dir", filepath.Join(work, "data"), "--tokens-file", tokensFile, "--log-level", "error")
	if err != nil {
		return fmt.Errorf("agentloop serve: %w", err)
	}
	defer srv.stop()
	rss0, _ := procStatus(srv.cmd.Process.Pid, "VmRSS")

	c := &client{base: srv.url, token: token, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.clients, MaxConnsPerHost: 0}}}
	results := make([]turn, cfg.clients)
	var opened, ready sync.WaitGroup
	opened.Add(cfg.clients)
	ready.Add(1)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range cfg.clients {
		wg.Go(func() { results[i] = c.session(ctx, &opened, &ready) })
	}
	opened.Wait() // every stream is open: N streams held at once
	peakStreams, _ := procStatus(srv.cmd.Process.Pid, "VmRSS")
	ready.Done()
	wg.Wait()
	wall := time.Since(start)
	hwm, _ := procStatus(srv.cmd.Process.Pid, "VmHWM")
	cpu, _ := procCPU(srv.cmd.Process.Pid)

	var firsts, dones []time.Duration
	errs := 0
	var firstErr error
	for _, r := range results {
		if r.err != nil {
			errs++
			if firstErr == nil {
				firstErr = r.err
			}
			continue
		}
		firsts = append(firsts, r.first)
		dones = append(dones, r.done)
	}
	rec := map[string]any{
		"time": time.Now().UTC().Format(time.RFC3339), "clients": cfg.clients, "latency_ms": cfg.latency.Milliseconds(),
		"errors": errs, "wall_s": wall.Seconds(),
		"first_event_p50_ms": ms(pct(firsts, 50)), "first_event_p99_ms": ms(pct(firsts, 99)), "first_event_max_ms": ms(pct(firsts, 100)),
		"result_p50_ms": ms(pct(dones, 50)), "result_p99_ms": ms(pct(dones, 99)),
		"server_rss_start_mib": kib2mib(rss0), "server_rss_streams_open_mib": kib2mib(peakStreams), "server_peak_rss_mib": kib2mib(hwm),
		"server_cpu_s": cpu.Seconds(), "load_before": loadAverage(),
	}
	b, _ := json.Marshal(rec)
	fmt.Println(string(b))
	if cfg.out != "" {
		f, err := os.OpenFile(cfg.out, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	if errs > 0 {
		return fmt.Errorf("%d of %d clients failed; the first: %w", errs, cfg.clients, firstErr)
	}
	return nil
}

// turn is what one client measured.
type turn struct {
	first time.Duration // POST of the message to the first event of its turn
	done  time.Duration // POST of the message to its result
	err   error
}

type client struct {
	base, token string
	http        *http.Client
}

// session creates a session, opens its event stream and reports it open
// (opened), waits for every client to be open (ready), sends one message
// and reads the stream to the turn's result.
func (c *client) session(ctx context.Context, opened, ready *sync.WaitGroup) (t turn) {
	done := sync.OnceFunc(opened.Done)
	defer done()
	var rec struct {
		ID string `json:"id"`
	}
	if err := c.call(ctx, "POST", "/v1/sessions", `{"title":"load"}`, http.StatusCreated, &rec); err != nil {
		return turn{err: fmt.Errorf("create: %w", err)}
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(sctx, "GET", c.base+"/v1/sessions/"+rec.ID+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return turn{err: fmt.Errorf("events: %w", err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return turn{err: fmt.Errorf("events: %s", resp.Status)}
	}
	events := make(chan sse, 64)
	go readEvents(resp.Body, events)
	done()
	ready.Wait()
	sent := time.Now()
	if err := c.call(ctx, "POST", "/v1/sessions/"+rec.ID+"/messages", `{"text":"hello"}`, http.StatusAccepted, nil); err != nil {
		return turn{err: fmt.Errorf("message: %w", err)}
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return turn{err: errors.New("the event stream ended before the result")}
			}
			if t.first == 0 {
				t.first = ev.at.Sub(sent)
			}
			if ev.kind == "message" && strings.Contains(ev.data, `"type":"result"`) {
				t.done = ev.at.Sub(sent)
				return t
			}
		case <-ctx.Done():
			return turn{err: ctx.Err()}
		}
	}
}

// call makes one API call and decodes its answer into out, if any.
func (c *client) call(ctx context.Context, method, path, body string, want int, out any) error {
	req, _ := http.NewRequestWithContext(ctx, method, c.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, bytes.TrimSpace(b))
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// sse is one event of a stream, with the time it was read.
type sse struct {
	kind, data string
	at         time.Time
}

// readEvents reads server-sent events from r into out until r ends.
func readEvents(r io.Reader, out chan<- sse) {
	defer close(out)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var ev sse
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.kind != "" || ev.data != "" {
				ev.at = time.Now()
				out <- ev
			}
			ev = sse{}
		case strings.HasPrefix(line, "event:"):
			ev.kind = strings.TrimSpace(line[len("event:"):])
		case strings.HasPrefix(line, "data:"):
			ev.data += strings.TrimPrefix(line[len("data:"):], " ")
		}
	}
}

// proc is a child process that printed its base URL.
type proc struct {
	cmd *exec.Cmd
	url string
}

// startProc starts bin and waits for the first line of its output that
// holds an http:// URL.
func startProc(ctx context.Context, bin string, env []string, args ...string) (*proc, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if i := strings.Index(sc.Text(), "http://"); i >= 0 {
				urls <- strings.Fields(sc.Text()[i:])[0]
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case u := <-urls:
		return &proc{cmd: cmd, url: strings.TrimRight(u, "/")}, nil
	case <-time.After(15 * time.Second):
	case <-ctx.Done():
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, fmt.Errorf("%s printed no URL", bin)
}

// stop ends the process: SIGTERM, then SIGKILL after 10 s.
func (p *proc) stop() {
	p.cmd.Process.Signal(syscall.SIGTERM)
	t := time.AfterFunc(10*time.Second, func() { p.cmd.Process.Kill() })
	p.cmd.Wait()
	t.Stop()
}

// procStatus reads a "kB" field of /proc/<pid>/status.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

// procCPU is the user and system time of a live process.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100, nil // USER_HZ is 100 on Linux
}

func loadAverage() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	v, _ := strconv.ParseFloat(strings.Fields(string(b) + " 0")[0], 64)
	return v
}

// pct is the p-th percentile of ds (nearest rank); 0 for none.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s) + 99) / 100
	return s[max(0, min(len(s)-1, i-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func kib2mib(k int64) float64 { return float64(k) / 1024 }
