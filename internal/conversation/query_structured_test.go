package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

const answerSchema = `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`

func structuredRun(t *testing.T, schema string, retries int, replies ...agentlooptest.Reply) (*agentlooptest.Server, []agentloop.Message, error) {
	t.Helper()
	srv := agentlooptest.NewTB(t, replies...)
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{},
		OutputFormat: &agentloop.OutputFormat{Type: "json_schema", Schema: json.RawMessage(schema)}, MaxStructuredOutputRetries: retries}
	msgs, err := agentloop.Query(context.Background(), "What is the capital of France?", opts).Collect()
	return srv, msgs, err
}

func TestStructuredOutput(t *testing.T) {
	so := func(id string, input any) agentlooptest.Reply {
		return withUsage(agentlooptest.ToolUse(id, "StructuredOutput", input), 800, 20)
	}
	t.Run("valid first try", func(t *testing.T) {
		srv, msgs, err := structuredRun(t, answerSchema, 0, so("toolu_1", map[string]any{"answer": "Paris"}), agentlooptest.Text("never"))
		if err != nil {
			t.Fatal(err)
		}
		res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
		if res.Subtype != "success" || res.Text() != `{"answer":"Paris"}` || string(res.StructuredOutput) != `{"answer":"Paris"}` ||
			res.NumTurns != 2 || *res.StopReason != "tool_use" || srv.Len() != 1 {
			t.Errorf("result = %+v, %d requests", res, srv.Len())
		}
		var decl bool
		for _, tl := range srv.Requests()[0].Params.Tools {
			if tl.Name == "StructuredOutput" {
				decl = string(tl.InputSchema) == answerSchema
			}
		}
		if !decl {
			t.Error("StructuredOutput is not declared with the caller's schema")
		}
		tr, _ := msgs[2].(*agentloop.UserMessage)
		if tr == nil || tr.Message.Content[0].ResultText() != "Structured output provided successfully" {
			t.Errorf("tool result line = %+v", msgs[2])
		}
		type answer struct {
			Answer string `json:"answer"`
		}
		a, err := agentloop.StructuredOutput[answer](res)
		if err != nil || a.Answer != "Paris" {
			t.Errorf("StructuredOutput = %+v, %v", a, err)
		}
	})
	t.Run("text first then valid", func(t *testing.T) {
		srv, msgs, err := structuredRun(t, answerSchema, 0, withUsage(agentlooptest.Text("The capital is Paris."), 800, 10),
			withUsage(agentlooptest.ToolUse("toolu_2", "StructuredOutput", map[string]any{"answer": "Paris"}), 900, 20))
		if err != nil {
			t.Fatal(err)
		}
		var seq []string
		for _, m := range msgs {
			seq = append(seq, label(m))
		}
		want := []string{"system/init", "assistant:text", "user:synthetic", "assistant:tool_use", "user:tool_result", "result:success"}
		if diff := cmp.Diff(want, seq); diff != "" {
			t.Errorf("sequence (-want +got):\n%s", diff)
		}
		res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
		if res.NumTurns != 3 || res.Usage.InputTokens != 1700 || srv.Len() != 2 {
			t.Errorf("num_turns %d usage %+v", res.NumTurns, res.Usage)
		}
		if !strings.Contains(srv.Requests()[1].LastUserText(), "StructuredOutput") {
			t.Errorf("the follow-up does not name the tool: %q", srv.Requests()[1].LastUserText())
		}
	})
	t.Run("invalid until the limit", func(t *testing.T) {
		bad := func(id string) agentlooptest.Reply { return so(id, map[string]any{"city": "Paris"}) }
		srv, msgs, err := structuredRun(t, answerSchema, 2, bad("t1"), bad("t2"), bad("t3"), agentlooptest.Text("never"))
		var re *agentloop.ResultError
		if !errors.As(err, &re) {
			t.Fatalf("error = %v", err)
		}
		res := re.Result
		if res.Subtype != "error_max_structured_output_retries" || res.TerminalReason != "structured_output_retry_exhausted" ||
			res.NumTurns != 4 || srv.Len() != 3 || len(res.Errors) != 1 {
			t.Errorf("result = %+v, %d requests", res, srv.Len())
		}
		if want := 3 * (800*4/1e6 + 20*20/1e6); math.Abs(res.TotalCostUSD-want) > 1e-12 {
			t.Errorf("cost = %v, want %v", res.TotalCostUSD, want)
		}
		tr, _ := srv.Requests()[1].ToolResult("t1")
		if tr.IsError == nil || !*tr.IsError || !strings.Contains(tr.ResultText(), "Output does not match required schema") ||
			!strings.Contains(tr.ResultText(), "`answer`") {
			t.Errorf("validation result = %q", tr.ResultText())
		}
		_ = msgs
	})
	t.Run("nested schema with arrays, enums and $ref", func(t *testing.T) {
		schema := `{"$defs":{"city":{"type":"object","properties":{"name":{"type":"string"},"size":{"enum":["small","large"]}},"required":["name","size"]}},
			"type":"object","properties":{"cities":{"type":"array","items":{"$ref":"#/$defs/city"},"minItems":1}},"required":["cities"]}`
		bad := map[string]any{"cities": []any{map[string]any{"name": "Paris", "size": "huge"}}}
		good := map[string]any{"cities": []any{map[string]any{"name": "Paris", "size": "large"}}}
		srv, msgs, err := structuredRun(t, schema, 0, so("t1", bad), so("t2", good))
		if err != nil {
			t.Fatal(err)
		}
		tr, _ := srv.Requests()[1].ToolResult("t1")
		if tr.IsError == nil || !*tr.IsError {
			t.Errorf("an enum violation deep in an array was accepted: %q", tr.ResultText())
		}
		res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
		if diff := cmp.Diff(`{"cities":[{"name":"Paris","size":"large"}]}`, string(res.StructuredOutput)); diff != "" {
			t.Errorf("structured_output (-want +got):\n%s", diff)
		}
	})
	t.Run("draft-07 schema", func(t *testing.T) {
		schema := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`
		srv, msgs, err := structuredRun(t, schema, 0, so("t1", map[string]any{"n": 0}), so("t2", map[string]any{"n": 3}))
		if err != nil {
			t.Fatal(err)
		}
		if tr, _ := srv.Requests()[1].ToolResult("t1"); tr.IsError == nil || !*tr.IsError {
			t.Errorf("minimum not enforced: %q", tr.ResultText())
		}
		if res := msgs[len(msgs)-1].(*agentloop.ResultMessage); string(res.StructuredOutput) != `{"n":3}` {
			t.Errorf("structured_output = %s", res.StructuredOutput)
		}
	})
	t.Run("invalid schema fails before any model call", func(t *testing.T) {
		for _, schema := range []string{`{"type":"array"}`, `{"type":"object","properties":{"a":{"type":"strin"}}}`, `not json`, `{"type":"object","required":"a"}`} {
			srv, _, err := structuredRun(t, schema, 0)
			if err == nil || srv.Len() != 0 || !strings.Contains(err.Error(), "schema") {
				t.Errorf("schema %s: err %v, %d requests", schema, err, srv.Len())
			}
		}
	})
}

func TestOutputFormatFor(t *testing.T) {
	type answer struct {
		Answer string   `json:"answer"`
		Tags   []string `json:"tags,omitempty"`
	}
	f, err := agentloop.OutputFormatFor[answer]()
	if err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("t1", "StructuredOutput", map[string]any{"answer": "42"}))
	res, err := agentloop.Query(context.Background(), "?", &agentloop.Options{Provider: provider(t, srv, nil),
		Cwd: t.TempDir(), OutputFormat: f}).Result()
	if err != nil {
		t.Fatal(err)
	}
	a, err := agentloop.StructuredOutput[answer](res)
	if err != nil || a.Answer != "42" {
		t.Errorf("got %+v, %v", a, err)
	}
	if _, err := agentloop.OutputFormatFor[chan int](); !errors.Is(err, agentloop.ErrInvalidOption) {
		t.Errorf("channel type: %v", err)
	}
}
