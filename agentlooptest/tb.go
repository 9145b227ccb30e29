package agentlooptest

import (
	"errors"
	"strconv"
	"testing"
)

// NewTB starts a server with replies as its main queue for the test tb. The
// server is closed when the test ends (through tb.Cleanup), and then the
// test fails, with tb.Errorf, for every entry of [Server.Mismatches] (Expect
// failures and histories the real API rejects) and for every request that
// found its script exhausted, unless the test opted out with
// [Server.AllowInvalidHistory] or [Server.AllowExhausted] (or
// [Server.SetExhausted]). NewTB fails the test at once if the server cannot
// start.
func NewTB(tb testing.TB, replies ...Reply) *Server {
	tb.Helper()
	s, err := Start(replies...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		s.Close()
		for _, msg := range s.failures() {
			tb.Errorf("agentlooptest: %s", msg)
		}
	})
	return s
}

// failures lists what NewTB reports when the test ends.
func (s *Server) failures() []string {
	s.mu.Lock()
	allowInvalid, allowExhausted := s.allowInvalid, s.allowExhausted
	s.mu.Unlock()
	var out []string
	for _, err := range s.Mismatches() {
		var he *HistoryError
		if allowInvalid && errors.As(err, &he) {
			continue
		}
		out = append(out, err.Error())
	}
	if !allowExhausted {
		for i, r := range s.Requests() {
			if r.Kind == KindExhausted {
				out = append(out, "request "+strconv.Itoa(i)+" found the script exhausted (call AllowExhausted if that is expected)")
			}
		}
	}
	return out
}
