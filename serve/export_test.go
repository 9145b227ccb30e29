package serve

import "context"

// SetAfterSend makes send call f between Send and the events it numbers,
// until the test ends (restore is registered by the caller).
func SetAfterSend(f func()) (restore func()) {
	old := afterSend
	afterSend = f
	return func() { afterSend = old }
}

// Crash makes the replica behave as a dead process towards the store: it
// renews no lease and writes nothing more, and its sessions' clients stop
// (their transcript leases lapse as a dead process's would; they are
// released at once, which only makes the test quicker).
func (s *Server) Crash() {
	s.crashed.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.live {
		go l.conn.Close()
	}
}

// AppendEventForTest stores an event of session id of tenant as its
// holder would, for benchmarks of the streams of other replicas.
func (s *Server) AppendEventForTest(tenant, id string, seq int64, kind string, data []byte) error {
	return s.appendEvent(context.Background(), tenant, id, event{Seq: seq, Kind: kind, Data: data})
}

// SetSandboxAvailable replaces the kernel check of New until restore.
func SetSandboxAvailable(f func() (int, error)) (restore func()) {
	old := sandboxAvailable
	sandboxAvailable = f
	return func() { sandboxAvailable = old }
}

// SetAfterGetLoad makes GET /v1/sessions/{id} call f between loading the
// record and reporting it.
func SetAfterGetLoad(f func()) (restore func()) {
	old := afterGetLoad
	afterGetLoad = f
	return func() { afterGetLoad = old }
}
