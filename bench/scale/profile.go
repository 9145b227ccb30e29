package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"
)

// startProfiles starts a CPU profile of the run and schedules heap and
// goroutine profiles at cfg.profileAt, when cfg.profileDir is set; stop
// ends the CPU profile and writes heap-end.pprof, whose alloc_space is
// what the whole run allocated. Profiles are for finding where the time and the
// memory go; the run's numbers are taken with them on.
func startProfiles(ctx context.Context, cfg *config) (stop func(), err error) {
	if cfg.profileDir == "" {
		return func() {}, nil
	}
	// Sample one allocation in 4 KiB rather than 512 KiB, so that the heap
	// profile sees what each session holds, not a few large buffers. That
	// costs CPU: with -profile-at 0 there is a CPU profile only, and the
	// default rate.
	if cfg.profileAt > 0 {
		runtime.MemProfileRate = 4096
	}
	if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
		return nil, fmt.Errorf("profile dir: %w", err)
	}
	f, err := os.Create(filepath.Join(cfg.profileDir, "cpu.pprof"))
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if cfg.profileAt <= 0 {
		return func() {
			pprof.StopCPUProfile()
			f.Close()
		}, nil
	}
	t := time.AfterFunc(cfg.profileAt, func() {
		for _, name := range []string{"heap", "goroutine"} {
			w, err := os.Create(filepath.Join(cfg.profileDir, name+".pprof"))
			if err != nil {
				fmt.Fprintln(os.Stderr, "scale: profile:", err)
				continue
			}
			if err := pprof.Lookup(name).WriteTo(w, 0); err != nil {
				fmt.Fprintln(os.Stderr, "scale: profile:", err)
			}
			w.Close()
		}
	})
	return func() {
		t.Stop()
		pprof.StopCPUProfile()
		f.Close()
		// What the whole run allocated (alloc_space), for the bytes per turn.
		w, err := os.Create(filepath.Join(cfg.profileDir, "heap-end.pprof"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "scale: profile:", err)
			return
		}
		defer w.Close()
		if err := pprof.Lookup("heap").WriteTo(w, 0); err != nil {
			fmt.Fprintln(os.Stderr, "scale: profile:", err)
		}
	}, nil
}
