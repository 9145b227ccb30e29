package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/bench/scale/internal/result"
)

// idleResult is what the idle child prints on stdout.
type idleResult struct {
	RSSPerSessionKiB  float64 `json:"rss_per_session_kib"`
	HeapPerSessionKiB float64 `json:"heap_per_session_kib"`
}

// runIdle creates cfg.sessions Clients and no turn, and prints the growth
// of the resident set and of the live heap per Client as JSON. One Client
// is created first and left out of the count, so that what a process does
// once (the first session's set-up) is not charged to every session.
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
	for range cfg.sessions {
		c, err := newClient()
		if err != nil {
			return err
		}
		clients = append(clients, c)
	}
	rss1, heap1, err := memNow()
	if err != nil {
		return err
	}
	n := float64(cfg.sessions)
	out := idleResult{
		RSSPerSessionKiB:  float64(rss1-rss0) / 1024 / n,
		HeapPerSessionKiB: float64(int64(heap1)-int64(heap0)) / 1024 / n,
	}
	runtime.KeepAlive(clients)
	return json.NewEncoder(os.Stdout).Encode(out)
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
	rec.IdleRSSPerSessKiB, rec.IdleHeapPerSessKiB = r.RSSPerSessionKiB, r.HeapPerSessionKiB
	return nil
}
