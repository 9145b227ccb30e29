package conversation_test

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
)

// CLAUDE_CODE_AUTO_COMPACT_WINDOW sets the window (raised to its 100k
// minimum), DISABLE_AUTO_COMPACT turns automatic compaction off: a reply
// that reports 95k tokens of context is compacted after under a 100k
// window, and not under the model's own; CLAUDE_AUTOCOMPACT_PCT_OVERRIDE
// lowers the threshold to a percentage.
func TestCompactionEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		compact bool
	}{
		{"model window", nil, false},
		{"window from env", map[string]string{"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100k"}, true},
		{"window below the minimum is raised to it", map[string]string{"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "8000"}, true},
		{"not a size: ignored", map[string]string{"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "lots"}, false},
		{"disabled", map[string]string{"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000", "DISABLE_AUTO_COMPACT": "1"}, false},
		// CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: a percentage of the default
		// model's 1M window less the 20k output reserve; 9 % is 88.2k
		// (compact at 95k), 10 % is 98k (not yet).
		{"percent brings compaction earlier", map[string]string{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "9"}, true},
		{"percent above the context: not yet", map[string]string{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "10"}, false},
		{"percent over 100: ignored", map[string]string{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "150"}, false},
		{"percent not a number: ignored", map[string]string{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "half"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			cwd, configDir := compactSetup(t)
			srv := agentlooptest.NewTB(t)
			call := agentlooptest.ToolUse("toolu_1", "big", map[string]any{"n": 1})
			call.Usage = model.Usage{InputTokens: 95_000, OutputTokens: 10}
			srv.Push(call, agentlooptest.Text("Done."))
			srv.Route(isSummary, agentlooptest.Text("<summary>SUMMARY-ENV</summary>"))
			msgs, err := agentloop.Query(context.Background(), "Go.", compactOptions(t, srv, cwd, configDir, 0)).Collect()
			if err != nil {
				t.Fatal(err)
			}
			if got := len(boundaries(t, msgs)) == 1; got != tc.compact {
				t.Errorf("compacted: %v, want %v", got, tc.compact)
			}
		})
	}
}
