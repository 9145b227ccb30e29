package main

import (
	"testing"
)

func TestVmRSS(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    int64
		wantErr bool
	}{
		{"present", "Name:\tx\nVmPeak:\t  9000 kB\nVmRSS:\t   1234 kB\nThreads:\t4\n", 1234 * 1024, false},
		{"missing", "Name:\tx\n", 0, true},
		{"bad unit", "VmRSS:\t12 MB\n", 0, true},
		{"bad number", "VmRSS:\tx kB\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := vmRSS([]byte(tt.status))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("vmRSS = %d, want %d", got, tt.want)
			}
		})
	}
}

// TestSelfRSS checks the sampler against the kernel: this process has a
// resident set, and the sampler sees it and at least one goroutine.
func TestSelfRSS(t *testing.T) {
	s := startSampler(1e6, false)
	rss, g := s.finish()
	if rss <= 0 || g <= 0 {
		t.Errorf("sampler saw rss %d, goroutines %d; want both positive", rss, g)
	}
}
