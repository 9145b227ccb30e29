package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestOverheads builds a timeline of two turns by hand and checks what is
// counted as set-up, tool and overhead.
func TestOverheads(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(msec float64) time.Time { return t0.Add(time.Duration(msec * float64(time.Millisecond))) }
	tests := []struct {
		name      string
		tl        *timeline
		wantSetup time.Duration
		want      []time.Duration
		wantOK    bool
	}{{
		name: "tool between replies",
		tl: &timeline{
			start:    at(0),
			reqStart: []time.Time{at(2), at(220)}, respEnd: []time.Time{at(202), at(421)},
			// reply 0 ends at 202, its tool runs 203–213, request 1 goes at 220: 18 - 10.
			toolStart: []time.Time{at(203)}, toolEnd: []time.Time{at(213)},
		},
		wantSetup: 2 * time.Millisecond, want: []time.Duration{8 * time.Millisecond}, wantOK: true,
	}, {
		name: "assistant yielded before the body's EOF, result after the next request",
		tl: &timeline{
			start:    at(0),
			reqStart: []time.Time{at(1), at(30)}, respEnd: []time.Time{at(10), at(50)},
			// the tool counts from 10 (EOF), not 9, and up to 30 (request), not 31.
			toolStart: []time.Time{at(9)}, toolEnd: []time.Time{at(31)},
		},
		wantSetup: time.Millisecond, want: []time.Duration{0}, wantOK: true,
	}, {
		name: "a retry leaves an extra request",
		tl: &timeline{
			start:    at(0),
			reqStart: []time.Time{at(1), at(5), at(30)}, respEnd: []time.Time{at(4), at(10), at(50)},
			toolStart: []time.Time{at(11)}, toolEnd: []time.Time{at(20)},
		},
	}, {
		name: "a reply never ended",
		tl: &timeline{
			start:    at(0),
			reqStart: []time.Time{at(1)}, respEnd: []time.Time{{}},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setup, got, ok := tt.tl.overheads()
			if ok != tt.wantOK || setup != tt.wantSetup {
				t.Errorf("setup, ok = %v, %v; want %v, %v", setup, ok, tt.wantSetup, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("overheads (-want +got):\n%s", diff)
			}
		})
	}
}
