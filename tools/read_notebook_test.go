package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/tool"
)

// TestReadNotebookAsReference: a notebook with outputs (stream,
// execute_result, error), markdown and raw cells, and one without cell
// ids, read as the reference renders them (recorded against Claude Code
// 2.1.332; see also testdata/conformance/t_notebook_edit of the module):
// one text block, cells on their own lines, non-code cells naming their
// type, each output's text after an empty line, the error's name and
// value before its traceback.
func TestReadNotebookAsReference(t *testing.T) {
	for _, tc := range []struct{ name, nb, want string }{
		{"outputs", `{"cells":[
 {"cell_type":"code","execution_count":3,"id":"a1","metadata":{},"outputs":[{"name":"stdout","output_type":"stream","text":["hello\n","world\n"]},{"output_type":"execute_result","execution_count":3,"data":{"text/plain":["42"]},"metadata":{}}],"source":["x = 1\n","print(x)"]},
 {"cell_type":"markdown","id":"a2","metadata":{},"source":["# T\n","text"]},
 {"cell_type":"raw","id":"a3","metadata":{},"source":["raw stuff"]},
 {"cell_type":"code","execution_count":null,"id":"a4","metadata":{},"outputs":[{"output_type":"error","ename":"ValueError","evalue":"bad","traceback":["tb line"]}],"source":["raise ValueError('bad')"]}],
 "metadata":{"language_info":{"name":"python"}},"nbformat":4,"nbformat_minor":5}`,
			"<cell id=\"a1\">x = 1\nprint(x)</cell id=\"a1\">\n\nhello\nworld\n\n\n42\n<cell id=\"a2\"><cell_type>markdown</cell_type># T\ntext</cell id=\"a2\">\n" +
				"<cell id=\"a3\"><cell_type>raw</cell_type>raw stuff</cell id=\"a3\">\n<cell id=\"a4\">raise ValueError('bad')</cell id=\"a4\">\n\nValueError: bad\ntb line"},
		{"v4.4 without ids", `{"cells":[{"cell_type":"code","execution_count":null,"metadata":{},"outputs":[],"source":["y=2"]}],"metadata":{},"nbformat":4,"nbformat_minor":4}`,
			"<cell id=\"cell-0\">y=2</cell id=\"cell-0\">"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "nb.ipynb")
			if err := os.WriteFile(path, []byte(tc.nb), 0o600); err != nil {
				t.Fatal(err)
			}
			env := &tool.Env{Cwd: dir, Home: dir, State: &tool.State{}}
			r := sideRun(t, context.Background(), Read(), env, map[string]any{"file_path": path})
			if r.IsError || len(r.Content) != 1 || !r.ListContent {
				t.Fatalf("result: error %v, %d blocks, list %v; want one text block sent as a list", r.IsError, len(r.Content), r.ListContent)
			}
			if diff := cmp.Diff(tc.want, r.Content[0].Text); diff != "" {
				t.Errorf("notebook text (-want +got):\n%s", diff)
			}
		})
	}
}
