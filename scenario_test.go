package agentloop_test

// TestScenarios runs the end-to-end scenarios of testdata/scenarios: each
// *.txtar file is one run of the root API (agentloop.Query, or a Client for
// several prompts) against a scripted fake of the Messages API
// (agentlooptest), and pins what the run streamed, what the model was sent
// and what became of the files.
//
// A scenario is a txtar archive. Its comment is a one-line description of
// the behaviour pinned. Its sections:
//
//	options.json   optional; a subset of Options, decoded strictly (an
//	               unknown key fails the scenario):
//	                 model, maxTurns, maxBudgetUsd, maxTokens,
//	                 permissionMode, allowedTools, disallowedTools,
//	                 systemPrompt, appendSystemPrompt, fallbackModels,
//	                 settingSources (default: none), settings (inline
//	                 JSON, as Options.Settings),
//	                 tools: built-in tool names (absent: none at all;
//	                   the string "default": the default set),
//	                 customTools: names of the runner's test tools:
//	                   echo  read-only, answers "echo: <text>"
//	                   slow  read-only, waits 200ms, answers "slow: <text>"
//	                   fail  read-only, fails with "disk on fire: <text>"
//	                   touch changes state (needs permission), answers
//	                         "touched"
//	               Cwd is always a fresh temporary directory.
//	replies.json   the model's replies, in order: a JSON array of
//	                 {"text": "…"}                one text block
//	                 {"toolUse": {"id", "name", "input"}}
//	                 {"blocks": [{"text"}|{"toolUse"}|{"thinking"}, …]}
//	               with optional "thinking" (a thinking block first),
//	               "stopReason", "model", "usage": {"input", "output",
//	               "cacheRead", "cacheCreation"}; or a failure:
//	                 {"error": {"status", "type", "message"}}  HTTP error
//	                 {"errorEvent": {"type", "message"}}       SSE error
//	               A tool_use needs an explicit id. "$CWD" anywhere in
//	               replies.json stands for the cwd.
//	prompt         the prompt of one agentloop.Query (trailing newline
//	               dropped); or
//	client-prompts one prompt per non-empty line, sent in turn to one
//	               Client (its history carries over).
//	files/PATH     written into the cwd before the run, with fixed
//	               modification times one second apart in archive order
//	               (later sections are newer), so mtime orders are stable.
//	want-files/PATH
//	               the file's content in the cwd after the run (an empty
//	               section whose name ends in ".absent" means PATH must not
//	               exist).
//	want           golden: one line per streamed message (see describe),
//	               then "error: …" if the stream ended with an error.
//	want-requests  golden, optional: per messages request, the model, the
//	               tools offered, the roles of the history and the blocks of
//	               its last message; then how many replies were left unused.
//
// Volatile values are normalised: the cwd becomes $CWD and HOME $HOME;
// uuids, message ids, session ids, timestamps and durations are left out.
//
//	go test -run TestScenarios -update
//
// rewrites want (and want-requests, where the archive has one) from the
// actual run; read the diff before you commit it.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var updateScenarios = flag.Bool("update", false, "rewrite the want and want-requests sections of testdata/scenarios")

func TestScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenarios in testdata/scenarios")
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runScenario(t, file)
		})
	}
}

// scenarioOptions is the options.json of a scenario.
type scenarioOptions struct {
	Model              string          `json:"model"`
	MaxTurns           int             `json:"maxTurns"`
	MaxBudgetUSD       float64         `json:"maxBudgetUsd"`
	MaxTokens          int             `json:"maxTokens"`
	PermissionMode     string          `json:"permissionMode"`
	AllowedTools       []string        `json:"allowedTools"`
	DisallowedTools    []string        `json:"disallowedTools"`
	SystemPrompt       string          `json:"systemPrompt"`
	AppendSystemPrompt string          `json:"appendSystemPrompt"`
	FallbackModels     []string        `json:"fallbackModels"`
	SettingSources     []string        `json:"settingSources"`
	Settings           json.RawMessage `json:"settings"`
	Tools              json.RawMessage `json:"tools"`
	CustomTools        []string        `json:"customTools"`
}

type scenarioToolUse struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type scenarioBlock struct {
	Text     *string          `json:"text"`
	ToolUse  *scenarioToolUse `json:"toolUse"`
	Thinking *string          `json:"thinking"`
}

type scenarioError struct {
	Status  int    `json:"status"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// scenarioReply is one element of replies.json.
type scenarioReply struct {
	Text       *string          `json:"text"`
	ToolUse    *scenarioToolUse `json:"toolUse"`
	Blocks     []scenarioBlock  `json:"blocks"`
	Thinking   *string          `json:"thinking"`
	StopReason string           `json:"stopReason"`
	Model      string           `json:"model"`
	Usage      *struct {
		Input         int64 `json:"input"`
		Output        int64 `json:"output"`
		CacheRead     int64 `json:"cacheRead"`
		CacheCreation int64 `json:"cacheCreation"`
	} `json:"usage"`
	Error      *scenarioError `json:"error"`
	ErrorEvent *scenarioError `json:"errorEvent"`
}

func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func (b scenarioBlock) content() (model.Content, error) {
	n := 0
	var c model.Content
	if b.Text != nil {
		n++
		c = model.TextBlock(*b.Text)
	}
	if b.ToolUse != nil {
		n++
		if b.ToolUse.ID == "" || b.ToolUse.Name == "" {
			return c, errors.New("toolUse needs an id and a name")
		}
		var input any = map[string]any{}
		if len(b.ToolUse.Input) > 0 {
			input = b.ToolUse.Input
		}
		c = agentlooptest.ToolUseBlock(b.ToolUse.ID, b.ToolUse.Name, input)
	}
	if b.Thinking != nil {
		n++
		c = agentlooptest.ThinkingBlock(*b.Thinking, "")
	}
	if n != 1 {
		return c, fmt.Errorf("a block needs exactly one of text, toolUse, thinking; has %d", n)
	}
	return c, nil
}

func (r scenarioReply) reply() (agentlooptest.Reply, error) {
	var blocks []scenarioBlock
	kinds := 0
	if r.Text != nil {
		kinds++
		blocks = append(blocks, scenarioBlock{Text: r.Text})
	}
	if r.ToolUse != nil {
		kinds++
		blocks = append(blocks, scenarioBlock{ToolUse: r.ToolUse})
	}
	if r.Blocks != nil {
		kinds++
		blocks = r.Blocks
	}
	var out agentlooptest.Reply
	switch {
	case r.Error != nil:
		kinds++
		out = agentlooptest.Error(r.Error.Status, r.Error.Type, r.Error.Message)
	case r.ErrorEvent != nil:
		kinds++
		out = agentlooptest.ErrorEvent(r.ErrorEvent.Type, r.ErrorEvent.Message)
	}
	if kinds != 1 {
		return out, errors.New("a reply needs exactly one of text, toolUse, blocks, error, errorEvent")
	}
	if r.Thinking != nil {
		blocks = append([]scenarioBlock{{Thinking: r.Thinking}}, blocks...)
	}
	if len(blocks) > 0 {
		var cs []model.Content
		for _, b := range blocks {
			c, err := b.content()
			if err != nil {
				return out, err
			}
			cs = append(cs, c)
		}
		out = agentlooptest.Blocks(cs...)
	}
	out.StopReason = r.StopReason
	out.Model = r.Model
	if u := r.Usage; u != nil {
		out.Usage = model.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadInputTokens: u.CacheRead, CacheCreationInputTokens: u.CacheCreation}
	}
	return out, nil
}

type scenarioEchoIn struct {
	Text string `json:"text" jsonschema:"text to echo"`
}

// scenarioTools are the tools options.json can name in customTools.
var scenarioTools = map[string]func() agentloop.Tool{
	"echo": func() agentloop.Tool {
		return agentloop.NewTool("echo", "Echo the text.", func(ctx context.Context, in scenarioEchoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			return agentloop.TextResult("echo: " + in.Text), nil
		}, &agentloop.ToolOptions{ReadOnly: true})
	},
	"slow": func() agentloop.Tool {
		return agentloop.NewTool("slow", "Wait, then echo the text.", func(ctx context.Context, in scenarioEchoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			select {
			case <-time.After(200 * time.Millisecond):
			case <-ctx.Done():
				return agentloop.ToolResult{}, ctx.Err()
			}
			return agentloop.TextResult("slow: " + in.Text), nil
		}, &agentloop.ToolOptions{ReadOnly: true})
	},
	"fail": func() agentloop.Tool {
		return agentloop.NewTool("fail", "Always fails.", func(ctx context.Context, in scenarioEchoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			return agentloop.ToolResult{}, errors.New("disk on fire: " + in.Text)
		}, &agentloop.ToolOptions{ReadOnly: true})
	},
	"touch": func() agentloop.Tool {
		return agentloop.NewTool("touch", "Changes state.", func(ctx context.Context, in scenarioEchoIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
			return agentloop.TextResult("touched"), nil
		}, nil)
	},
}

func (so *scenarioOptions) options(cwd string) (*agentloop.Options, error) {
	o := &agentloop.Options{
		Cwd: cwd, Model: so.Model, MaxTurns: so.MaxTurns, MaxBudgetUSD: so.MaxBudgetUSD, MaxTokens: so.MaxTokens,
		AllowedTools: so.AllowedTools, DisallowedTools: so.DisallowedTools,
		SystemPrompt: so.SystemPrompt, AppendSystemPrompt: so.AppendSystemPrompt, FallbackModels: so.FallbackModels,
		SettingSources: []settings.SettingSource{}, Tools: []string{},
	}
	if so.PermissionMode != "" {
		m, err := agentloop.ParsePermissionMode(so.PermissionMode)
		if err != nil {
			return nil, err
		}
		o.PermissionMode = m
	}
	for _, s := range so.SettingSources {
		o.SettingSources = append(o.SettingSources, settings.SettingSource(s))
	}
	if len(so.Settings) > 0 {
		o.Settings = string(so.Settings)
	}
	switch t := strings.TrimSpace(string(so.Tools)); {
	case t == "":
	case t == `"default"`:
		o.Tools = nil
	default:
		if err := decodeStrict(so.Tools, &o.Tools); err != nil {
			return nil, fmt.Errorf("tools: %v", err)
		}
	}
	for _, name := range so.CustomTools {
		mk, ok := scenarioTools[name]
		if !ok {
			return nil, fmt.Errorf("no custom test tool %q", name)
		}
		o.CustomTools = append(o.CustomTools, mk())
	}
	return o, nil
}

func runScenario(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(ar.Comment)) == "" {
		t.Error("the scenario has no description (the archive's comment)")
	}
	sections := map[string][]byte{}
	for _, f := range ar.Files {
		if _, dup := sections[f.Name]; dup {
			t.Fatalf("section %s appears twice", f.Name)
		}
		sections[f.Name] = f.Data
	}

	cwd := t.TempDir()
	if real, err := filepath.EvalSymlinks(cwd); err == nil {
		cwd = real
	}
	var so scenarioOptions
	if data, ok := sections["options.json"]; ok {
		if err := decodeStrict(data, &so); err != nil {
			t.Fatalf("options.json: %v", err)
		}
	}
	opts, err := so.options(cwd)
	if err != nil {
		t.Fatalf("options.json: %v", err)
	}
	var sreplies []scenarioReply
	repliesJSON := strings.ReplaceAll(string(sections["replies.json"]), "$CWD", cwd)
	if err := decodeStrict([]byte(repliesJSON), &sreplies); err != nil {
		t.Fatalf("replies.json: %v", err)
	}
	var replies []agentlooptest.Reply
	for i, r := range sreplies {
		rep, err := r.reply()
		if err != nil {
			t.Fatalf("replies.json[%d]: %v", i, err)
		}
		replies = append(replies, rep)
	}
	var prompts []string
	_, oneShot := sections["prompt"]
	if oneShot {
		prompts = []string{strings.TrimSuffix(string(sections["prompt"]), "\n")}
	}
	if data, ok := sections["client-prompts"]; ok {
		if oneShot {
			t.Fatal("a scenario has prompt or client-prompts, not both")
		}
		for _, l := range strings.Split(string(data), "\n") {
			if strings.TrimSpace(l) != "" {
				prompts = append(prompts, l)
			}
		}
	}
	if len(prompts) == 0 {
		t.Fatal("no prompt: add a prompt or client-prompts section")
	}
	known := []string{"options.json", "replies.json", "prompt", "client-prompts", "want", "want-requests"}
	mtime := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range ar.Files {
		rel, isFile := strings.CutPrefix(f.Name, "files/")
		switch {
		case isFile:
			p := filepath.Join(cwd, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			mtime = mtime.Add(time.Second)
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(f.Name, "want-files/"):
		case !slices.Contains(known, f.Name):
			t.Fatalf("unknown section %q", f.Name)
		}
	}

	srv := agentlooptest.NewTB(t, replies...)
	p, err := anthropic.New(&anthropic.Options{
		APIKey: "sk-test", BaseURL: srv.URL,
		Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() },
	})
	if err != nil {
		t.Fatal(err)
	}
	opts.Provider = p

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	norm := normaliser(cwd)
	var lines []string
	collect := func(s agentloop.Stream) {
		for m, err := range s {
			if err != nil {
				lines = append(lines, norm("error: "+err.Error()))
				break
			}
			lines = append(lines, norm(describe(m)))
		}
	}
	if oneShot {
		collect(agentloop.Query(ctx, prompts[0], opts))
	} else {
		c, err := agentloop.NewClient(opts)
		if err != nil {
			t.Fatal(err)
		}
		for i, pr := range prompts {
			lines = append(lines, fmt.Sprintf("== prompt %d: %q", i+1, pr))
			collect(c.Query(ctx, pr))
		}
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	got := map[string]string{"want": strings.Join(lines, "\n") + "\n"}
	if _, ok := sections["want-requests"]; ok {
		got["want-requests"] = norm(describeRequests(srv))
	}

	var fileDiffs []string
	for _, f := range ar.Files {
		rel, ok := strings.CutPrefix(f.Name, "want-files/")
		if !ok {
			continue
		}
		p := filepath.Join(cwd, filepath.FromSlash(strings.TrimSuffix(rel, ".absent")))
		data, err := os.ReadFile(p)
		if strings.HasSuffix(rel, ".absent") {
			if err == nil {
				fileDiffs = append(fileDiffs, fmt.Sprintf("%s exists, want it absent; it holds %q", rel, data))
			}
			continue
		}
		if err != nil {
			fileDiffs = append(fileDiffs, err.Error())
			continue
		}
		if diff := cmp.Diff(string(f.Data), string(data)); diff != "" {
			fileDiffs = append(fileDiffs, fmt.Sprintf("%s (-want +got):\n%s", rel, diff))
		}
	}
	for _, d := range fileDiffs {
		t.Error("want-files/" + d)
	}

	if *updateScenarios {
		changed := false
		if _, ok := sections["want"]; !ok {
			ar.Files = append(ar.Files, txtar.File{Name: "want"})
		}
		for i := range ar.Files {
			if g, ok := got[ar.Files[i].Name]; ok && string(ar.Files[i].Data) != g {
				ar.Files[i].Data = []byte(g)
				changed = true
			}
		}
		if changed {
			if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("updated %s", file)
		}
		return
	}
	for _, sec := range []string{"want", "want-requests"} {
		g, ok := got[sec]
		if !ok {
			continue
		}
		// Lines, not one string, so that the diff is one line per message.
		if diff := cmp.Diff(strings.Split(string(sections[sec]), "\n"), strings.Split(g, "\n")); diff != "" {
			t.Errorf("%s of %s (-want +got):\n%s\n(run go test -run 'TestScenarios/%s' -update to accept the new output)",
				sec, file, diff, filepath.Base(strings.TrimSuffix(file, ".txtar")))
		}
	}
}

// normaliser replaces the run's volatile paths.
func normaliser(cwd string) func(string) string {
	home := os.Getenv("HOME")
	return func(s string) string {
		s = strings.ReplaceAll(s, cwd, "$CWD")
		if home != "" {
			s = strings.ReplaceAll(s, home, "$HOME")
		}
		return s
	}
}

// describe is the golden line of one streamed message.
func describe(m agentloop.Message) string {
	switch m := m.(type) {
	case *agentloop.SystemMessage:
		var b strings.Builder
		b.WriteString("system " + m.Subtype)
		switch {
		case m.Init != nil:
			in := m.Init
			fmt.Fprintf(&b, " model=%s permissionMode=%s cwd=%s tools=[%s]", in.Model, in.PermissionMode, in.Cwd, strings.Join(in.Tools, ","))
		case m.APIRetry != nil:
			r := m.APIRetry
			status := "none"
			if r.ErrorStatus != nil {
				status = fmt.Sprint(*r.ErrorStatus)
			}
			fmt.Fprintf(&b, " attempt=%d/%d status=%s error=%s", r.Attempt, r.MaxRetries, status, r.Error)
		case m.PermissionDenied != nil:
			d := m.PermissionDenied
			fmt.Fprintf(&b, " %s %s reason=%s %q", d.ToolName, d.ToolUseID, d.DecisionReasonType, d.Message)
		case m.Status != nil:
			if m.Status.Status != nil {
				b.WriteString(" " + *m.Status.Status)
			}
		default:
			keys := make([]string, 0, len(m.Data))
			for k := range m.Data {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, " %s=%s", k, m.Data[k])
			}
		}
		return b.String()
	case *agentloop.AssistantMessage:
		var parts []string
		for _, c := range m.Message.Content {
			parts = append(parts, describeBlock(c))
		}
		s := "assistant " + strings.Join(parts, " + ")
		if m.IsAPIErrorMessage {
			s += fmt.Sprintf(" [api error=%s status=%d model=%s]", m.Error, m.APIErrorStatus, m.Message.Model)
		}
		return s
	case *agentloop.UserMessage:
		var parts []string
		for _, c := range m.Message.Content {
			parts = append(parts, describeBlock(c))
		}
		s := "user "
		if m.IsSynthetic {
			s += "synthetic "
		}
		s += strings.Join(parts, " + ")
		for _, meta := range m.ToolResultMeta {
			d := meta.PermissionDecision
			s += fmt.Sprintf(" [%s by %s/%s", d.Decision, d.Source, d.ReasonType)
			if meta.NonExecutionKind != "" {
				s += " not run: " + meta.NonExecutionKind
			}
			s += "]"
		}
		return s
	case *agentloop.ResultMessage:
		var b strings.Builder
		fmt.Fprintf(&b, "result %s is_error=%t turns=%d", m.Subtype, m.IsError, m.NumTurns)
		stop := "null"
		if m.StopReason != nil {
			stop = *m.StopReason
		}
		fmt.Fprintf(&b, " stop=%s terminal=%s", stop, m.TerminalReason)
		fmt.Fprintf(&b, " usage=%d/%d cost=$%.6f", m.Usage.InputTokens, m.Usage.OutputTokens, m.TotalCostUSD)
		if m.APIErrorStatus != nil {
			fmt.Fprintf(&b, " api_error=%d/%s", *m.APIErrorStatus, m.APIErrorType)
		}
		for _, d := range m.PermissionDenials {
			fmt.Fprintf(&b, " denied=%s:%s:%s", d.ToolName, d.ToolUseID, d.ToolInput)
		}
		for _, e := range m.Errors {
			fmt.Fprintf(&b, " errors+=%q", e)
		}
		if m.Result != nil {
			fmt.Fprintf(&b, " text=%q", *m.Result)
		}
		return b.String()
	}
	b, _ := json.Marshal(m)
	return m.Kind() + " " + string(b)
}

// describeBlock is one content block in a golden line.
func describeBlock(c model.Content) string {
	switch c.Type {
	case "text":
		return fmt.Sprintf("text %q", c.Text)
	case "thinking":
		return fmt.Sprintf("thinking %q", c.Thinking)
	case "tool_use":
		return fmt.Sprintf("tool_use %s %s %s", c.ID, c.Name, c.Input)
	case "tool_result":
		return fmt.Sprintf("tool_result %s is_error=%t %q", c.ToolUseID, c.IsError != nil && *c.IsError, c.ResultText())
	}
	return c.Type
}

// describeRequests is the golden of what the model was sent.
func describeRequests(srv *agentlooptest.Server) string {
	var b strings.Builder
	for i, r := range srv.Requests() {
		p := r.Params
		var roles []string
		for _, m := range p.Messages {
			roles = append(roles, m.Role)
		}
		fmt.Fprintf(&b, "request %d kind=%s model=%s tools=[%s]\n", i+1, r.Kind, p.Model, strings.Join(r.ToolNames(), ","))
		fmt.Fprintf(&b, "  history %s\n", strings.Join(roles, ","))
		if len(p.Messages) == 0 {
			continue
		}
		last := p.Messages[len(p.Messages)-1]
		for _, c := range last.Content {
			s := describeBlock(c)
			// The first prompt carries the session's context (CLAUDE.md,
			// environment) in system-reminder blocks: too volatile to pin.
			if c.Type == "text" && strings.HasPrefix(c.Text, "<system-reminder>") {
				s = "text <system-reminder>"
			}
			fmt.Fprintf(&b, "  last %s %s\n", last.Role, s)
		}
	}
	if n := srv.Remaining(); n > 0 {
		fmt.Fprintf(&b, "unused replies: %d\n", n)
	}
	return b.String()
}
