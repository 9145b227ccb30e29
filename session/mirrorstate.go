package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// MirrorStateSubpath is the sub-key under which a Mirror with
// MirrorOptions.TrackState records, in the store itself, whether its copy
// of the session is complete. [Restore] reads it and does not write it to
// the local layout.
const MirrorStateSubpath = "mirror-state"

// TypeMirrorState is the type of the entries under MirrorStateSubpath.
const TypeMirrorState = "mirror-state"

// The states a mirror-state entry records.
const (
	mirrorOpen   = "open"   // a writer started copying; written before its first batch
	mirrorClosed = "closed" // the writer closed; lost entries were not stored
)

// mirrorState is the content of a mirror-state entry.
type mirrorState struct {
	State  string `json:"state"`
	Writer string `json:"writer"`
	Lost   int    `json:"lost"`
}

// stateEntry returns a mirror-state entry of the session sessionID.
func stateEntry(sessionID string, st mirrorState) Entry {
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	return Entry{Type: TypeMirrorState, SessionID: sessionID,
		Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		Extra: map[string]json.RawMessage{
			"state": raw(st.State), "writer": raw(st.Writer), "lost": raw(st.Lost)}}
}

// StoreState is what a store's mirror-state records say about its copy of
// a session: how many writers started copying it and never recorded a
// clean close (they stopped, timed out at close, or are still running),
// and how many entries writers recorded as not stored. The zero value is a
// copy with nothing known missing, which is also what a session written
// without state tracking (an older agentloop, the reference CLI) reads as.
type StoreState struct {
	Writers  int // writers that recorded a start
	Unclosed int // of those, writers with no close record
	Lost     int // entries the closed writers recorded as not stored
}

// Behind reports whether the store's copy is known or suspected to lack
// entries that were written locally.
func (s StoreState) Behind() bool { return s.Unclosed > 0 || s.Lost > 0 }

// String describes what is known missing, for a warning.
func (s StoreState) String() string {
	var parts []string
	if s.Lost > 0 {
		parts = append(parts, fmt.Sprintf("%d entries known not stored", s.Lost))
	}
	if s.Unclosed > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d writers never recorded that their copy finished (an unknown number of entries may be missing)", s.Unclosed, s.Writers))
	}
	if len(parts) == 0 {
		return "complete"
	}
	return strings.Join(parts, "; ")
}

// LoadStoreState reads the mirror-state records of a session from store.
// Records it cannot parse are ignored.
func LoadStoreState(ctx context.Context, store Store, key Key) (StoreState, error) {
	k := Key{ProjectKey: key.ProjectKey, SessionID: key.SessionID, Subpath: MirrorStateSubpath}
	entries, err := store.Load(ctx, k)
	if err != nil {
		return StoreState{}, fmt.Errorf("session: reading the mirror state of %s: %w", key.SessionID, err)
	}
	return foldStoreState(entries), nil
}

// foldStoreState sums the records: each writer's last record counts.
func foldStoreState(entries []Entry) StoreState {
	last := map[string]mirrorState{}
	var order []string
	for _, e := range entries {
		if e.Type != TypeMirrorState {
			continue
		}
		b, err := e.MarshalJSON()
		if err != nil {
			continue
		}
		var st mirrorState
		if json.Unmarshal(b, &st) != nil || st.Writer == "" {
			continue
		}
		if _, seen := last[st.Writer]; !seen {
			order = append(order, st.Writer)
		}
		last[st.Writer] = st
	}
	var out StoreState
	for _, w := range order {
		st := last[w]
		out.Writers++
		if st.State != mirrorClosed {
			out.Unclosed++
		}
		out.Lost += st.Lost
	}
	return out
}
