package agentlooptest_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
)

// ask is a minimal Messages API client: it sends one streaming request and
// returns the text and the stop reason of the reply.
func ask(baseURL, prompt string) (text, stop string, err error) {
	body, _ := json.Marshal(model.Request{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Stream:    true,
		Messages:  []model.Message{{Role: "user", Content: []model.Content{model.TextBlock(prompt)}}},
	})
	req, _ := http.NewRequest("POST", baseURL+"/v1/messages", strings.NewReader(string(body)))
	req.Header.Set("content-type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type  string
			Delta struct {
				Type, Text string
				StopReason string `json:"stop_reason"`
			}
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return "", "", err
		}
		switch {
		case ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta":
			text += ev.Delta.Text
		case ev.Type == "message_delta":
			stop = ev.Delta.StopReason
		}
	}
	return text, stop, sc.Err()
}

// Example tests a small Messages API client against a scripted server: the
// first call is overloaded, the second gets a text reply; then the test
// checks what the client sent.
func Example() {
	s := agentlooptest.NewServer(
		agentlooptest.Overloaded(),
		agentlooptest.Text("Hello! How can I help?"),
	)
	defer s.Close()

	_, _, err := ask(s.URL, "Hi")
	fmt.Println("first call:", err)

	text, stop, err := ask(s.URL, "Hi again")
	fmt.Printf("second call: %q %s %v\n", text, stop, err)

	req := s.LastRequest()
	fmt.Println("requests:", s.Len())
	fmt.Println("model:", req.Params.Model)
	fmt.Println("prompt:", req.LastUserText())
	fmt.Println("version header:", req.Header.Get("anthropic-version"))
	// Output:
	// first call: status 529
	// second call: "Hello! How can I help?" end_turn <nil>
	// requests: 2
	// model: claude-sonnet-4-5
	// prompt: Hi again
	// version header: 2023-06-01
}

// A session against the scripted server: Provider points agentloop's model
// client at it, with no credentials and no environment.
func ExampleServer_Provider() {
	srv, err := agentlooptest.Start(agentlooptest.Text("Hello from the script."))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	res, err := agentloop.Query(context.Background(), "Say hello", &agentloop.Options{
		Provider: srv.Provider(), Tools: []string{}, NoSessionPersistence: true, SettingSources: []settings.SettingSource{},
	}).Result()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Text())
	fmt.Println(srv.Len(), "request")
	// Output:
	// Hello from the script.
	// 1 request
}
