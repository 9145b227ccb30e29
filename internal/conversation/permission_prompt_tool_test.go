package conversation_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/settings"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// approveServer is an MCP server whose tool "approve" answers permission
// requests as the reference's --permission-prompt-tool expects: it allows
// a call unless its input mentions "forbidden", and it records each
// request it got.
func approveServer(got *[]map[string]any, answer func(in map[string]any) string) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "perm", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "approve"}, func(ctx context.Context, _ *sdk.CallToolRequest, in map[string]any) (*sdk.CallToolResult, any, error) {
		*got = append(*got, in)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: answer(in)}}}, nil, nil
	})
	return s
}

// TestPermissionPromptTool: with PermissionPromptTool, a call no rule
// decides is put to that MCP tool with tool_name, input and tool_use_id;
// its allow runs the call (with its updatedInput), its deny refuses it
// with its message and records the denial, as recorded in
// testdata/conformance/t_permission_prompt_tool.
func TestPermissionPromptTool(t *testing.T) {
	var asked []map[string]any
	answer := func(in map[string]any) string {
		b, _ := json.Marshal(in["input"])
		if strings.Contains(string(b), "forbidden") {
			return `{"behavior":"deny","message":"the approve tool refused it"}`
		}
		upd := in["input"].(map[string]any)
		upd["content"] = "changed\n"
		out, _ := json.Marshal(map[string]any{"behavior": "allow", "updatedInput": upd})
		return string(out)
	}
	cwd := t.TempDir()
	ok, bad := filepath.Join(cwd, "out.txt"), filepath.Join(cwd, "forbidden.txt")
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Write", map[string]any{"file_path": ok, "content": "hi\n"}),
		agentlooptest.ToolUse("toolu_2", "Write", map[string]any{"file_path": bad, "content": "no\n"}),
		agentlooptest.Text("done"))
	msgs, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Write"}, ToolSearch: agentloop.ToolSearchOff,
		SettingSources: []settings.SettingSource{}, PermissionPromptTool: "mcp__perm__approve",
		MCPServers:   map[string]agentloop.MCPServerConfig{"perm": mcp.InProcess(approveServer(&asked, answer))},
		MCPConnector: mcp.Connector{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(ok); err != nil || string(b) != "changed\n" {
		t.Errorf("out.txt = %q, %v; want the updatedInput's content", b, err)
	}
	if _, err := os.Stat(bad); err == nil {
		t.Error("forbidden.txt was written despite the deny")
	}
	if len(asked) != 2 || asked[0]["tool_name"] != "Write" || asked[0]["tool_use_id"] != "toolu_1" {
		t.Errorf("the approve tool was asked %v", asked)
	}
	if text, isErr := toolResultText(msgs, "toolu_2"); !isErr || text != "the approve tool refused it" {
		t.Errorf("denied call's result = %q (error %v)", text, isErr)
	}
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolUseID != "toolu_2" {
		t.Errorf("permission_denials = %+v", res.PermissionDenials)
	}
}

// TestPermissionPromptToolBadAnswers: a missing tool or an answer that is
// not a permission decision denies the call with a message naming the
// tool, and nothing runs.
func TestPermissionPromptToolBadAnswers(t *testing.T) {
	for _, tt := range []struct{ name, tool, answer, want string }{
		{"missing tool", "mcp__perm__nope", `{"behavior":"allow"}`, "mcp__perm__nope is not among"},
		{"not json", "mcp__perm__approve", `yes please`, "not a permission decision"},
		{"unknown behavior", "mcp__perm__approve", `{"behavior":"maybe"}`, "not a permission decision"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var asked []map[string]any
			cwd := t.TempDir()
			file := filepath.Join(cwd, "out.txt")
			srv := agentlooptest.NewTB(t,
				agentlooptest.ToolUse("toolu_1", "Write", map[string]any{"file_path": file, "content": "hi\n"}),
				agentlooptest.Text("done"))
			msgs, err := mcpRun(t, context.Background(), &agentloop.Options{
				Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Write"}, ToolSearch: agentloop.ToolSearchOff,
				SettingSources: []settings.SettingSource{}, PermissionPromptTool: tt.tool,
				MCPServers: map[string]agentloop.MCPServerConfig{"perm": mcp.InProcess(approveServer(&asked,
					func(map[string]any) string { return tt.answer }))},
				MCPConnector: mcp.Connector{},
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(file); err == nil {
				t.Error("the call ran")
			}
			if text, isErr := toolResultText(msgs, "toolu_1"); !isErr || !strings.Contains(text, tt.want) {
				t.Errorf("result = %q (error %v), want it to say %q", text, isErr, tt.want)
			}
		})
	}
}

// TestPermissionPromptToolWithCanUseTool: both ways of asking at once is
// an error that names them.
func TestPermissionPromptToolWithCanUseTool(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("hi"))
	_, err := mcpRun(t, context.Background(), &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), PermissionPromptTool: "mcp__perm__approve",
		CanUseTool: func(context.Context, agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
			return agentloop.Allow(), nil
		},
	})
	if err == nil || !strings.Contains(err.Error(), "PermissionPromptTool") {
		t.Errorf("err = %v, want one naming PermissionPromptTool", err)
	}
}
