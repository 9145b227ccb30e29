package agentlooptest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// TestDiscardRequests: after DiscardRequests requests are answered and
// counted but not kept.
func TestDiscardRequests(t *testing.T) {
	srv := agentlooptest.NewServer()
	defer srv.Close()
	srv.SetExhausted(agentlooptest.Text("ok"))
	send := func() {
		t.Helper()
		body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
		res, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	send()
	srv.DiscardRequests()
	send()
	send()
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("kept %d requests, want 1", n)
	}
	if all, msgs := srv.Served(); all != 3 || msgs != 3 {
		t.Errorf("Served = %d, %d; want 3, 3", all, msgs)
	}
}
