package agentlooptest

import "testing"

// NewTB starts a server with replies as its main queue for the test tb. The
// server is closed when the test ends (through tb.Cleanup), after which
// every recorded Expect mismatch is reported with tb.Errorf. NewTB fails the
// test if the server cannot start.
func NewTB(tb testing.TB, replies ...Reply) *Server {
	tb.Helper()
	s, err := Start(replies...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		s.Close()
		for _, err := range s.Mismatches() {
			tb.Errorf("agentlooptest: %v", err)
		}
	})
	return s
}
