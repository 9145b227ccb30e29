package agentloop_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
)

func TestDbgCompact(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t)
	scriptedSession(srv, 3)
	ctx := context.Background()
	first, _ := agentloop.Query(ctx, "Look at two outputs.", compactOptions(t, srv, cwd, configDir, 0)).Result()
	opts := compactOptions(t, srv, cwd, configDir, 0)
	opts.Resume = first.SessionID
	res, _ := agentloop.Query(ctx, "/compact keep", opts).Result()
	t.Logf("ids %s %s", first.SessionID, res.SessionID)
	filepath.Walk(configDir, func(p string, info os.FileInfo, err error) error {
		if strings.HasSuffix(p, ".jsonl") {
			b, _ := os.ReadFile(p)
			for _, l := range strings.Split(string(b), "\n") {
				if len(l) > 160 {
					l = l[:160]
				}
				t.Logf("%s: %s", filepath.Base(p), l)
			}
		}
		return nil
	})
}
