package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/bench/scale/internal/result"
)

// idleResult is what the idle child prints on stdout.
type idleResult struct {
	Sessions          int     `json:"sessions"`
	RSSPerSessionKiB  float64 `json:"rss_per_session_kib"`
	HeapPerSessionKiB float64 `json:"heap_per_session_kib"`
	// RSSHeldPerSessionKiB is the growth of the resident set once the
	// runtime has given back the pages it freed (debug.FreeOSMemory):
	// what the idle Clients hold, without the garbage their creation
	// left and the runtime keeps for reuse.
	RSSHeldPerSessionKiB float64 `json:"rss_held_per_session_kib"`
	// FDsPerSession is the growth of the open descriptors per Client;
	// FilesCreated counts the files and directories the Clients made
	// under the configuration directory.
	FDsPerSession float64 `json:"fds_per_session"`
	FilesCreated  int     `json:"files_created"`
	// FailedAt is the 1-based Client whose NewClient failed (0: none),
	// with its error; the figures then cover the Clients before it.
	FailedAt int    `json:"failed_at,omitzero"`
	Error    string `json:"error,omitzero"`
}

// runIdle creates cfg.sessions Clients and no turn, and prints the growth
// of the resident set, of the live heap and of the open descriptors per
// Client as JSON. One Client is created first and left out of the count,
// so that what a process does once (the first session's set-up) is not
// charged to every session. A NewClient that fails (too many open files,
// say) ends the run early: the result says where and why.
func runIdle(cfg *config) error {
	one := *cfg
	one.sessions = 1
	prov, err := newProvider(&one)
	if err != nil {
		return err
	}
	opts := sessionOptions(cfg, prov)
	newClient := func() (*agentloop.Client, error) {
		o := *opts
		c, err := agentloop.NewClient(&o)
		if err != nil {
			return nil, fmt.Errorf("new client: %w", err)
		}
		return c, nil
	}
	warm, err := newClient()
	if err != nil {
		return err
	}
	defer warm.Close()
	files0 := countFiles(cfg.configDir)
	fds0 := openFDs()
	rss0, heap0, err := memNow()
	if err != nil {
		return err
	}
	clients := make([]*agentloop.Client, 0, cfg.sessions)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	var out idleResult
	for i := range cfg.sessions {
		c, err := newClient()
		if err != nil {
			out.FailedAt, out.Error = i+1, err.Error()
			break
		}
		clients = append(clients, c)
	}
	rss1, heap1, err := memNow()
	if err != nil {
		return err
	}
	debug.FreeOSMemory()
	rss2, err := processRSS("self")
	if err != nil {
		return err
	}
	n := float64(max(len(clients), 1))
	out.Sessions = len(clients)
	out.RSSPerSessionKiB = float64(rss1-rss0) / 1024 / n
	out.HeapPerSessionKiB = float64(int64(heap1)-int64(heap0)) / 1024 / n
	out.RSSHeldPerSessionKiB = float64(rss2-rss0) / 1024 / n
	out.FDsPerSession = float64(openFDs()-fds0) / n
	out.FilesCreated = countFiles(cfg.configDir) - files0
	runtime.KeepAlive(clients)
	return json.NewEncoder(os.Stdout).Encode(out)
}

// openFDs counts this process's open descriptors (-1 where /proc is not).
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// countFiles counts the files and directories under dir.
func countFiles(dir string) int {
	n := 0
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && p != dir {
			n++
		}
		return nil
	})
	return n
}

// memNow collects garbage and returns the resident set and the live heap.
func memNow() (rss int64, heap uint64, err error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err = processRSS("self")
	return rss, ms.HeapAlloc, err
}

// measureIdle runs this program again with -mode idle, so that the idle
// figures come from a fresh process, and copies them into rec.
func measureIdle(ctx context.Context, cfg *config, rec *result.Record) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("idle: %w", err)
	}
	cmd := exec.CommandContext(ctx, self, "-mode", "idle", "-sessions", fmt.Sprint(cfg.sessions),
		"-fixture", cfg.fixture, "-server", cfg.serverURL, "-config-dir", cfg.configDir, fmt.Sprintf("-persist=%v", cfg.persist))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("idle child: %w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var r idleResult
	if err := json.Unmarshal(out, &r); err != nil {
		return fmt.Errorf("idle child output %q: %w", out, err)
	}
	if r.FailedAt > 0 {
		return fmt.Errorf("idle child: client %d: %s", r.FailedAt, r.Error)
	}
	rec.IdleRSSPerSessKiB, rec.IdleHeapPerSessKiB = r.RSSPerSessionKiB, r.HeapPerSessionKiB
	return nil
}
