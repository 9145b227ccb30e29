// Package webtest drives the web page of `agentloop serve` in a real browser:
// Debian's Chromium under playwright-core (e2e.mjs), against the real server
// on loopback with a scripted model.
package webtest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/serve"
)

var update = flag.Bool("update", false, "write the page's screenshot to docs/serve-web.png")

// chromiumPath is where Debian's chromium package puts the browser; the
// CHROMIUM environment variable overrides it.
const chromiumPath = "/usr/bin/chromium"

// Texts the scripted model answers with; e2e.mjs waits for the same ones.
const (
	command = "touch from-web.txt && echo hello-from-bash" // writes: asks first
	reply1  = "The command printed hello-from-bash."
	reply2  = "Second turn: still here."
)

// needBrowser returns the chromium and node binaries, or skips the test
// when either is missing (also when $CI is set: .ci/run installs chromium
// where apt can, and a machine without it skips), with -short, or when
// AGENTLOOP_WEBTEST=0.
func needBrowser(t *testing.T) (chromium, node string) {
	t.Helper()
	if os.Getenv("AGENTLOOP_WEBTEST") == "0" {
		t.Skip("AGENTLOOP_WEBTEST=0")
	}
	if testing.Short() {
		t.Skip("a real browser is slow; skipped with -short")
	}
	chromium = os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = chromiumPath
	}
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no browser at %s (apt-get install chromium): %v", chromium, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("node not found: %v", err)
	}
	return chromium, node
}

// installDeps runs `npm ci` in this folder when node_modules lacks
// playwright-core. A failure skips the test, or fails it when $CI is set.
func installDeps(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join("node_modules", "playwright-core", "package.json")); err == nil {
		return
	}
	npm, err := exec.LookPath("npm")
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
		var out []byte
		out, err = cmd.CombinedOutput()
		if err != nil {
			err = errors.Join(err, errors.New(string(out)))
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("npm ci in serve/webtest: %v", err)
		}
		t.Skipf("npm ci in serve/webtest: %v", err)
	}
}

// eventCutter ends every event stream after it has carried `every` events,
// as a flaky network or proxy would, so the page has to reconnect with
// Last-Event-ID; it records the Last-Event-ID of each stream request.
type eventCutter struct {
	next  http.Handler
	every int

	mu      sync.Mutex
	resumes []int64 // Last-Event-ID of each stream request (0: none sent)
}

func (c *eventCutter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, "/events") {
		c.next.ServeHTTP(w, r)
		return
	}
	last, _ := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	c.mu.Lock()
	c.resumes = append(c.resumes, last)
	c.mu.Unlock()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c.next.ServeHTTP(&cutWriter{ResponseWriter: w, left: c.every, cancel: cancel}, r.WithContext(ctx))
}

// cutWriter cancels the stream's context after `left` events (an event
// ends with a blank line) and drops what the handler writes after that.
type cutWriter struct {
	http.ResponseWriter
	left   int
	prevNL bool // the last byte written was a newline
	cancel context.CancelFunc
}

func (w *cutWriter) Write(p []byte) (int, error) {
	if w.left <= 0 {
		return 0, context.Canceled
	}
	for i, b := range p {
		if b == '\n' && w.prevNL {
			w.left--
			if w.left == 0 {
				n, err := w.ResponseWriter.Write(p[:i+1])
				http.NewResponseController(w.ResponseWriter).Flush()
				w.cancel()
				return n, err
			}
		}
		w.prevNL = b == '\n'
	}
	return w.ResponseWriter.Write(p)
}

// Flush flushes the real writer (wrappers that look for http.Flusher
// would otherwise find none).
func (w *cutWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the real writer.
func (w *cutWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (c *eventCutter) resumedAfter() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int64
	for _, v := range c.resumes {
		if v > 0 {
			out = append(out, v)
		}
	}
	return out
}

// TestWebPage runs e2e.mjs: token, new session, a message, a streamed tool
// call that needs permission, Allow, the answer, cost and turns; then a
// reload, the session reopened from the list (history replayed) and a
// second message; a third, slow turn interrupted with the Interrupt button.
// Event streams are cut every 4 events, so the page must reconnect with
// Last-Event-ID without showing an event twice.
func TestWebPage(t *testing.T) {
	chromium, node := needBrowser(t)
	installDeps(t)

	root := t.TempDir()
	base, token, cutter, model := startServer(t, root)

	shot := filepath.Join(t.TempDir(), "serve-web.png")
	if *update {
		shot = filepath.Join("..", "..", "docs", "serve-web.png")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "e2e.mjs")
	cmd.Env = append(os.Environ(),
		"WEBTEST_URL="+base+"/",
		"WEBTEST_TOKEN="+token,
		"WEBTEST_SCREENSHOT="+shot,
		"CHROMIUM="+chromium,
	)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	t.Logf("e2e.mjs (%v):\n%s", time.Since(start).Round(time.Millisecond), out.String())
	if err != nil {
		// Keep the failure's screenshot past the test's temporary directory.
		failed := strings.TrimSuffix(shot, ".png") + "-failed.png"
		kept := filepath.Join(os.TempDir(), "agentloop-webtest-failed.png")
		if b, rerr := os.ReadFile(failed); rerr == nil && os.WriteFile(kept, b, 0o644) == nil {
			failed = kept
		}
		t.Fatalf("e2e.mjs failed: %v (screenshot of the failure: %s)", err, failed)
	}
	if !lastLineIs(out.Bytes(), "e2e: passed") {
		t.Fatalf("e2e.mjs exited 0 without its closing line %q", "e2e: passed")
	}
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot at %s: %v", shot, err)
	}
	// The command ran (after Allow) in the session's directory under root,
	// and the model got its output.
	var made []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "from-web.txt" {
			made = append(made, p)
		}
		return nil
	})
	if len(made) != 1 {
		t.Errorf("from-web.txt under %s: found %v, want one (the approved command did not run?)", root, made)
	}
	if reqs := model.Requests(); len(reqs) < 2 {
		t.Errorf("the model got %d requests, want at least 2", len(reqs))
	} else if res, ok := reqs[1].ToolResult("toolu_web1"); !ok || !strings.Contains(res.ResultText(), "hello-from-bash") {
		t.Errorf("tool result sent to the model = %q (found %v), want the command's output", res.ResultText(), ok)
	}
	if r := cutter.resumedAfter(); len(r) == 0 {
		t.Errorf("the page never reconnected with Last-Event-ID (streams cut every %d events)", cutter.every)
	} else {
		t.Logf("reconnections with Last-Event-ID: %v", r)
	}
}

func lastLineIs(b []byte, want string) bool {
	var last string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			last = s
		}
	}
	return last == want
}

// startServer starts the real server on loopback, its model scripted:
// a Bash call of command (which asks for permission in the default mode),
// then reply1; the next message gets reply2, the third a reply held back a
// minute (the page interrupts it). It returns the server's URL,
// a token of tenant "web" and the cutter in front of its event streams.
func startServer(t *testing.T, root string) (base, token string, cutter *eventCutter, model *agentlooptest.Server) {
	t.Helper()
	slow := agentlooptest.Text("(interrupted before this)")
	slow.Delay = time.Minute // ends early when the client goes away
	model = agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_web1", "Bash", map[string]any{"command": command, "description": "Print a greeting"}),
		agentlooptest.Text(reply1),
		agentlooptest.Text(reply2),
		slow,
	)
	provider, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: model.URL})
	if err != nil {
		t.Fatalf("model provider: %v", err)
	}
	token = "web-test-token"
	tenants := serve.NewMemoryTenants()
	tenants.Add(token, serve.Tenant{ID: "web"})
	srv, err := serve.New(serve.Config{
		Root:     root,
		DataDir:  t.TempDir(),
		Tenants:  tenants,
		Provider: provider,
	})
	if err != nil {
		t.Fatalf("serve.New: %v", err)
	}
	cutter = &eventCutter{next: srv.Handler(), every: 4}
	hs := httptest.NewServer(cutter)
	t.Cleanup(hs.Close)
	return hs.URL, token, cutter, model
}
