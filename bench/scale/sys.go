package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// cpuTime returns the user plus system CPU time of who (RUSAGE_SELF or
// RUSAGE_CHILDREN) and, for RUSAGE_SELF, the peak resident set in bytes.
func cpuTime(who int) (cpu time.Duration, maxRSS int64, err error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0, 0, fmt.Errorf("getrusage: %w", err)
	}
	return rusageCPU(&ru), ru.Maxrss * 1024, nil
}

// rusageCPU is the user plus system time of ru.
func rusageCPU(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// vmRSS returns the VmRSS line of a /proc/<pid>/status file, in bytes.
func vmRSS(status []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		line := sc.Bytes()
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("malformed VmRSS line %q", line)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("malformed VmRSS line %q: %w", line, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("no VmRSS line")
}

// processRSS returns the resident set of process pid ("self" for this one)
// in bytes.
func processRSS(pid string) (int64, error) {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, fmt.Errorf("read status of %s: %w", pid, err)
	}
	return vmRSS(b)
}

// sampler polls this process's RSS and goroutine count, or the summed RSS
// of a set of child processes, and keeps the largest values seen.
type sampler struct {
	mu         sync.Mutex
	pids       map[int]struct{} // children to sum; nil: this process
	maxRSS     int64
	maxRoutine int
	mem        *memReader // this process only
	atPeak     memClasses // memory classes at the sample of maxRSS
	maxLive    uint64     // the largest live heap after a GC
	stop       chan struct{}
	done       chan struct{}
}

// startSampler polls every period until stop is called. With children
// set it sums the RSS of the pids added with add; otherwise it samples
// this process.
func startSampler(period time.Duration, children bool) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	if children {
		s.pids = map[int]struct{}{}
	} else {
		s.mem = newMemReader()
	}
	go func() {
		defer close(s.done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

func (s *sampler) sample() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pids == nil {
		m := s.mem.read()
		s.maxLive = max(s.maxLive, m.LiveHeap)
		if rss, err := processRSS("self"); err == nil && rss > s.maxRSS {
			s.maxRSS, s.atPeak = rss, m
		}
		s.maxRoutine = max(s.maxRoutine, runtime.NumGoroutine())
		return
	}
	var sum int64
	for pid := range s.pids {
		if rss, err := processRSS(strconv.Itoa(pid)); err == nil {
			sum += rss
		}
	}
	s.maxRSS = max(s.maxRSS, sum)
}

func (s *sampler) add(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pids[pid] = struct{}{}
}

func (s *sampler) remove(pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pids, pid)
}

// finish stops the sampler and returns the largest RSS (bytes) and
// goroutine count seen.
func (s *sampler) finish() (rss int64, goroutines int) {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxRSS, s.maxRoutine
}

// peakMemory returns the memory classes at the largest RSS sampled and the
// largest live heap seen (this process only; call after finish).
func (s *sampler) peakMemory() (memClasses, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.atPeak, s.maxLive
}

const mib = 1 << 20

func toMiB(b int64) float64 { return float64(b) / mib }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// loadAverage returns the 1-minute load average, or 0 if it cannot be read.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := bytes.Fields(b)
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(string(f[0]), 64)
	return v
}
