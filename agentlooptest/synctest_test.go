package agentlooptest_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
)

// TestClientInSynctestBubble shows the supported way to test retry delays in
// fake time: the server lives outside the bubble, the client inside.
func TestClientInSynctestBubble(t *testing.T) {
	s := agentlooptest.NewTB(t, agentlooptest.Overloaded(), agentlooptest.Overloaded(), agentlooptest.Text("ok"))
	body, _ := json.Marshal(request(false, "hi"))
	synctest.Test(t, func(t *testing.T) {
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		start := time.Now()
		var statuses []int
		for backoff := time.Minute; ; backoff *= 2 {
			resp, err := client.Post(s.URL+"/v1/messages", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			statuses = append(statuses, resp.StatusCode)
			if resp.StatusCode == 200 {
				break
			}
			time.Sleep(backoff)
		}
		if len(statuses) != 3 || statuses[2] != 200 {
			t.Errorf("statuses %v", statuses)
		}
		if el := time.Since(start); el != 3*time.Minute {
			t.Errorf("fake time passed: %v, want 3m", el)
		}
	})
}
