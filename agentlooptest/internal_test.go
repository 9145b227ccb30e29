package agentlooptest

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestClientDisconnectEndsHandler checks that a handler stops when its client
// goes away, in the middle of a stream and during a Delay.
func TestClientDisconnectEndsHandler(t *testing.T) {
	slow := Text("slow")
	slow.Chunk, slow.EventDelay = 1, time.Hour
	s := NewServer(slow, Reply{Delay: time.Hour})
	defer s.Close()
	body := `{"model":"m","max_tokens":1,"stream":true,"messages":[{"role":"user","content":"x"}]}`

	for i := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v1/messages", strings.NewReader(body))
		got := make(chan struct{})
		go func() {
			defer close(got)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return
			}
			defer resp.Body.Close()
			// Read the first event, then leave.
			bufio.NewReader(resp.Body).ReadString('\n')
		}()
		if i == 0 {
			<-got
		} else {
			for s.Len() < 2 {
				time.Sleep(time.Millisecond)
			}
		}
		cancel()
		<-got

		done := make(chan struct{})
		go func() { s.handlers.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("request %d: the handler still runs after the client left", i)
		}
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"abc", 3, []string{"abc"}},
		{"abcd", 3, []string{"abc", "d"}},
		{"日本語です", 2, []string{"日本", "語で", "す"}},
		{"a\xffb", 1, []string{"a", "\xff", "b"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, split(tt.s, tt.n)); diff != "" {
			t.Errorf("split(%q, %d) (-want +got):\n%s", tt.s, tt.n, diff)
		}
	}
}

func TestResolveDefaults(t *testing.T) {
	r := Thinking("hmm", Blocks(ToolUseBlock("", "Read", nil), ServerToolUseBlock("", "web_search", nil)))
	got := r.resolve("")
	if got.Model != "claude-fake" || got.StopReason != "tool_use" || got.Chunk != DefaultChunk || got.DeltaUsage != DeltaUsageFull || got.Usage != defaultUsage {
		t.Errorf("defaults: %+v", got)
	}
	if !strings.HasPrefix(got.Content[0].Signature, "fakesig_") || !strings.HasPrefix(got.Content[1].ID, "toolu_fake_") || !strings.HasPrefix(got.Content[2].ID, "srvtoolu_fake_") {
		t.Errorf("generated fields: %+v", got.Content)
	}
	if r.Content[1].ID != "" {
		t.Errorf("resolve changed the script's reply")
	}
	if string(got.Content[1].Input) != "{}" {
		t.Errorf("nil input is %s", got.Content[1].Input)
	}
}
