//go:build unix

package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop/session"
)

// A FileStore waiting for a transcript another process holds locked gives
// up when its context ends.
func TestFileStoreLockHonoursContext(t *testing.T) {
	dir := t.TempDir()
	s := session.NewFileStore(dir)
	k := session.Key{ProjectKey: "-w", SessionID: sid}
	if err := s.Append(context.Background(), k, []session.Entry{session.PromptEntry("", "hi", "default")}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(session.ProjectsDir(dir), "-w", sid+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func(context.Context) error{
		"Append": func(c context.Context) error {
			return s.Append(c, k, []session.Entry{session.PromptEntry("", "again", "default")})
		},
		"Load": func(c context.Context) error { _, err := s.Load(c, k); return err },
	} {
		c, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		start := time.Now()
		err := call(c)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
			t.Errorf("%s on a locked file = %v after %v, want DeadlineExceeded after about 50ms", name, err, time.Since(start))
		}
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if es, err := s.Load(context.Background(), k); err != nil || len(es) != 1 {
		t.Errorf("after the lock is released: %d entries, %v; want the 1 written before", len(es), err)
	}
}
