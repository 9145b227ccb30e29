package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
)

// behindID is the session the store-behind tests run.
const behindID = "5a1c9e2b-7d3f-4e8a-9b6c-0d1e2f3a4b5c"

// behindRun is what one run on host A with a store that stops working
// mid-run left in its stream.
type behindRun struct {
	msgs        []agentloop.Message
	sinceFreeze time.Duration // from the freeze to the end of the stream
}

// runUntilFrozen runs a Query on host A (configA) whose tool "freeze"
// waits until the store holds the session's start, then calls freeze; the
// run goes on (one more reply) while the store does not work. The stream
// must end within bound after the freeze.
func runUntilFrozen(t *testing.T, srv *agentlooptest.Server, store session.Store, cwd, configA string,
	freeze func(), bound time.Duration) behindRun {
	t.Helper()
	var frozeAt atomic.Pointer[time.Time]
	key := session.Key{ProjectKey: session.ProjectKey(cwd), SessionID: behindID}
	freezeTool := agentloop.NewTool("freeze", "Stops the session store.", func(ctx context.Context, _ struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, err1 := session.LoadStoreState(ctx, store, key)
			es, err2 := store.Load(ctx, key)
			if err1 == nil && err2 == nil && st.Writers == 1 && len(es) >= 3 {
				break
			}
			if time.Now().After(deadline) {
				return agentloop.ToolResult{}, fmt.Errorf("the store never held the session's start: %+v %v %d entries %v", st, err1, len(es), err2)
			}
			time.Sleep(20 * time.Millisecond)
		}
		freeze()
		now := time.Now()
		frozeAt.Store(&now)
		return agentloop.TextResult("frozen"), nil
	}, nil)
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: configA, Tools: []string{},
		CustomTools: []agentloop.Tool{freezeTool}, PermissionMode: agentloop.PermissionBypass,
		SettingSources: []settings.SettingSource{}, SessionStore: store, SessionID: behindID}
	var run behindRun
	err := runWithin(t, bound+20*time.Second, agentloop.Query(context.Background(), "Remember KIWI, then freeze the store", opts),
		func(m agentloop.Message) { run.msgs = append(run.msgs, m) })
	if err != nil {
		t.Fatalf("run on host A: %v", err)
	}
	at := frozeAt.Load()
	if at == nil {
		t.Fatal("the freeze tool never ran")
	}
	run.sinceFreeze = time.Since(*at)
	t.Logf("the stream ended %v after the freeze", run.sinceFreeze)
	return run
}

// checkFrozenRun checks host A's stream: a successful result, reached
// within bound of the freeze, with a mirror_error before it.
func checkFrozenRun(t *testing.T, run behindRun, bound time.Duration) {
	t.Helper()
	if run.sinceFreeze > bound {
		t.Errorf("the stream ended %v after the store froze, want within %v", run.sinceFreeze, bound)
	}
	mirrorErr, result := -1, -1
	for i, m := range run.msgs {
		if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "mirror_error" && mirrorErr < 0 {
			mirrorErr = i
		}
		if r, ok := m.(*agentloop.ResultMessage); ok {
			result = i
			if r.IsError {
				t.Errorf("result is an error: %+v", r)
			}
		}
	}
	if result < 0 {
		t.Fatal("no result in the stream")
	}
	if mirrorErr < 0 || mirrorErr > result {
		t.Errorf("mirror_error at %d, result at %d: the stream must report the copies the store did not take, before the result", mirrorErr, result)
	}
}

// resumeElsewhere resumes the session on host B (a fresh ConfigDir) from
// the store and returns the session_store diagnostics it reported.
func resumeElsewhere(t *testing.T, srv *agentlooptest.Server, store session.Store, cwd string) []string {
	t.Helper()
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: t.TempDir(), Tools: []string{},
		SettingSources: []settings.SettingSource{}, SessionStore: store, Resume: behindID}
	var warned []string
	var res *agentloop.ResultMessage
	err := runWithin(t, 30*time.Second, agentloop.Query(context.Background(), "What did I ask you to remember?", opts), func(m agentloop.Message) {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == agentloop.DiagSessionStore {
			warned = append(warned, d.Text)
		}
		if r, ok := m.(*agentloop.ResultMessage); ok {
			res = r
		}
	})
	if err != nil || res == nil || res.SessionID != behindID {
		t.Fatalf("resume on host B: result %+v, err %v", res, err)
	}
	t.Logf("host B warnings: %q", warned)
	return warned
}

// failingStore rejects appends to main transcripts while fail is set; the
// mirror-state sub-key still works, so the writer can record what it lost.
type failingStore struct {
	*session.MemoryStore
	fail atomic.Bool
}

func (s *failingStore) Append(ctx context.Context, k session.Key, es []session.Entry) error {
	if s.fail.Load() && k.Subpath == "" {
		return errors.New("store refuses the write")
	}
	return s.MemoryStore.Append(ctx, k, es)
}

// A store that refuses writes after the run's first reply: the stream
// carries mirror_error before the result (the result waits for the store,
// bounded), the writer records how many entries the store lacks, and a
// resume on another host warns with that number.
func TestSessionStoreRefusingWarnsOnResume(t *testing.T) {
	const bound = 10 * time.Second // each refused batch takes 1 s of retries
	t.Cleanup(conversation.SetMirrorCloseTimeoutForTest(bound))
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "freeze", map[string]any{}),
		agentlooptest.Text("Remembered."), agentlooptest.Text("You asked me to remember KIWI."))
	store := &failingStore{MemoryStore: session.NewMemoryStore()}
	cwd := t.TempDir()
	run := runUntilFrozen(t, srv, store, cwd, t.TempDir(), func() { store.fail.Store(true) }, bound)
	checkFrozenRun(t, run, bound)
	store.fail.Store(false)
	warned := resumeElsewhere(t, srv, store, cwd)
	if len(warned) != 1 || !strings.Contains(warned[0], "may be truncated") || !strings.Contains(warned[0], "entries known not stored") {
		t.Errorf("session_store warnings on host B = %q, want one saying the history may be truncated with the count lost", warned)
	}
}

// A complete copy restores without a warning.
func TestSessionStoreCompleteNoWarning(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "freeze", map[string]any{}),
		agentlooptest.Text("Remembered."), agentlooptest.Text("You asked me to remember KIWI."))
	store := &failingStore{MemoryStore: session.NewMemoryStore()}
	cwd := t.TempDir()
	run := runUntilFrozen(t, srv, store, cwd, t.TempDir(), func() {}, 10*time.Second)
	for _, m := range run.msgs {
		if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "mirror_error" {
			t.Errorf("mirror_error with a working store: %v", s.Data)
		}
	}
	if warned := resumeElsewhere(t, srv, store, cwd); len(warned) != 0 {
		t.Errorf("session_store warnings for a complete copy: %q", warned)
	}
}

// frozenBound is how long the final wait for a frozen store may take in
// the tests with real servers.
const frozenBound = 1500 * time.Millisecond

// frozenCase runs the freeze scenario against a real store: host A's
// stream ends within the bound with a mirror_error, and host B, resuming
// after the store works again, is warned that the copy may be truncated.
func frozenCase(t *testing.T, store session.Store, freeze, thaw func()) {
	t.Cleanup(conversation.SetMirrorCloseTimeoutForTest(frozenBound))
	// Host A cannot release its store lease while the store is frozen: it
	// lapses after its TTL, which host B waits out.
	const leaseTTL = time.Second
	t.Cleanup(conversation.SetLeaseTTLForTest(leaseTTL))
	var thawOnce sync.Once
	t.Cleanup(func() { thawOnce.Do(thaw) })
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "freeze", map[string]any{}),
		agentlooptest.Text("Remembered."), agentlooptest.Text("You asked me to remember KIWI."))
	cwd := t.TempDir()
	run := runUntilFrozen(t, srv, store, cwd, t.TempDir(), freeze, frozenBound+3*time.Second)
	checkFrozenRun(t, run, frozenBound+3*time.Second)
	thawOnce.Do(thaw)
	time.Sleep(leaseTTL + 500*time.Millisecond)
	warned := resumeElsewhere(t, srv, store, cwd)
	if len(warned) != 1 || !strings.Contains(warned[0], "may be truncated") || !strings.Contains(warned[0], "never recorded") {
		t.Errorf("session_store warnings on host B = %q, want one saying the history may be truncated", warned)
	}
}
