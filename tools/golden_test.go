package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// update rewrites the golden files under testdata instead of comparing
// against them: go test ./tools/ -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// ftEnv is a session rooted at dir with its own state.
func ftEnv(dir string) *tool.Env {
	return &tool.Env{Cwd: dir, Home: dir, SessionID: "test-session", State: &tool.State{}}
}

// ftRun runs tl as the loop would: the input is validated against the
// tool's schema (which applies defaults) before Run. A Go error from Run
// becomes an is_error result, as the loop reports it.
func ftRun(t testing.TB, tl tool.Tool, env *tool.Env, input any) tool.Result {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	info := tl.Info()
	if err := tool.Check(tl); err != nil {
		t.Fatalf("%s: %v", info.Name, err)
	}
	schema, err := tool.CompileSchema(info.InputSchema)
	if err != nil {
		t.Fatalf("%s schema: %v", info.Name, err)
	}
	valid, err := schema.Validate(info.Name, raw)
	if err != nil {
		return tool.Error(err.Error())
	}
	r, err := tl.Run(context.Background(), &tool.Call{ID: "toolu_test", Input: valid, Env: env})
	if err != nil {
		return tool.Error(err.Error())
	}
	return r
}

// ftGoldenResult is what a golden file holds for one call: the tool_result as
// the model gets it and the tool_use_result reported to the host.
type ftGoldenResult struct {
	IsError       bool `json:"is_error"`
	Content       any  `json:"content"`
	ToolUseResult any  `json:"tool_use_result"`
}

var ftDurationMs = regexp.MustCompile(`"durationMs": \d+`)

// ftGoldenJSON renders r with the temporary directory tmp replaced by $TMP
// and durations zeroed, so that golden files are stable.
func ftGoldenJSON(t testing.TB, r tool.Result, tmp string) []byte {
	t.Helper()
	g := ftGoldenResult{IsError: r.IsError, ToolUseResult: r.Structured}
	if len(r.Content) == 1 && r.Content[0].Type == model.TypeText {
		g.Content = r.Content[0].Text
	} else {
		g.Content = r.Content
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(g); err != nil {
		t.Fatal(err)
	}
	out := buf.Bytes()
	if tmp != "" {
		out = bytes.ReplaceAll(out, []byte(tmp), []byte("$TMP"))
	}
	return ftDurationMs.ReplaceAll(out, []byte(`"durationMs": 0`))
}

// ftCheckGolden compares r with testdata/<dir>/<name>.json, or rewrites that
// file with -update.
func ftCheckGolden(t *testing.T, dir, name string, r tool.Result, tmp string) {
	t.Helper()
	got := ftGoldenJSON(t, r, tmp)
	file := filepath.Join("testdata", dir, name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", file, diff)
	}
}

// ftText is the text the model sees.
func ftText(r tool.Result) string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == model.TypeText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ftStructuredJSON marshals a result's tool_use_result compactly.
func ftStructuredJSON(t testing.TB, r tool.Result) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r.Structured); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// ftWriteFile creates a file (and its directories) under dir.
func ftWriteFile(t testing.TB, dir, rel, content string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// ftTempDir is t.TempDir with symbolic links resolved, so that paths
// printed by the tools match it.
func ftTempDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ftReducedSchema keeps what tool_schemas.json records of a schema: types,
// enums, required, defaults and additionalProperties.
func ftReducedSchema(t testing.TB, raw json.RawMessage) map[string]any {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, k := range []string{"type", "required", "additionalProperties"} {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	props := map[string]any{}
	for name, p := range s["properties"].(map[string]any) {
		pm := p.(map[string]any)
		rp := map[string]any{}
		for _, k := range []string{"type", "enum", "default"} {
			if v, ok := pm[k]; ok {
				rp[k] = v
			}
		}
		props[name] = rp
	}
	out["properties"] = props
	return out
}

// ftCheckSchema compares a tool's schema, reduced, with the reference's: the
// copy in testdata/<dir>/schema.json, and the shared spec when present.
func ftCheckSchema(t *testing.T, tl tool.Tool, dir string, order ...string) {
	t.Helper()
	info := tl.Info()
	got := ftReducedSchema(t, info.InputSchema)
	want := map[string]any{}
	data, err := os.ReadFile(filepath.Join("testdata", dir, "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s schema differs from the reference (-want +got):\n%s", info.Name, diff)
	}
	if shared, err := os.ReadFile("../../shared/spec/reference/tool_schemas.json"); err == nil {
		var all struct {
			Tools map[string]struct {
				InputSchema map[string]any `json:"input_schema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(shared, &all); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(all.Tools[info.Name].InputSchema, got); diff != "" {
			t.Errorf("%s schema differs from shared/spec (-want +got):\n%s", info.Name, diff)
		}
	}
	// Property order as the reference declares it.
	var ordered struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(info.InputSchema, &ordered); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(ordered.Properties))
	var keys []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(order, keys); diff != "" {
		t.Errorf("%s property order (-want +got):\n%s", info.Name, diff)
	}
	if info.Description == "" {
		t.Errorf("%s has no description", info.Name)
	}
}
