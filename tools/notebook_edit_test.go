package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

func TestNotebookEditInfo(t *testing.T) {
	sideCheckSchemas(t, "testdata/notebook/schema.json", NotebookEdit())
	if NotebookEdit().Info().ReadOnly {
		t.Error("NotebookEdit is read-only")
	}
}

// nbTestIDs makes inserted cells get the ids new1, new2, … during a test.
func nbTestIDs(t *testing.T, ids ...string) {
	old := nbEditNewID
	t.Cleanup(func() { nbEditNewID = old })
	nbEditNewID = func() string {
		id := ids[0]
		ids = ids[1:]
		return id
	}
}

// nbTestCopy copies the fixture testdata/notebook/<name> into dir.
func nbTestCopy(t *testing.T, dir, name string) (string, string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "notebook", name))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, string(data)
}

func nbStr(s string) *string { return &s }

func TestNotebookEditResults(t *testing.T) {
	tests := []struct {
		name    string
		fixture string
		in      map[string]any
		ids     []string // ids of inserted cells
		text    string
		want    NotebookEditResult // without the path and the files
	}{{
		name: "replace code cell", fixture: "v45.ipynb",
		in:   map[string]any{"cell_id": "calc", "new_source": "total = 2 + 2\nprint(total)\n"},
		text: "Updated cell calc with total = 2 + 2\nprint(total)\n",
		want: NotebookEditResult{NewSource: "total = 2 + 2\nprint(total)\n", OldSource: nbStr("print(1 + 1)"), CellID: "calc", CellType: "code", Language: "python", EditMode: "replace"},
	}, {
		name: "replace markdown cell as code", fixture: "v45.ipynb",
		in:   map[string]any{"cell_id": "intro", "new_source": "import os", "cell_type": "code", "edit_mode": "replace"},
		text: "Updated cell intro with import os",
		want: NotebookEditResult{NewSource: "import os", OldSource: nbStr("# Title\nSome <b>text</b> é ü"), CellID: "intro", CellType: "code", Language: "python", EditMode: "replace"},
	}, {
		name: "replace code cell as markdown", fixture: "v45.ipynb",
		in:   map[string]any{"cell_id": "calc", "new_source": "*gone*", "cell_type": "markdown"},
		text: "Updated cell calc with *gone*",
		want: NotebookEditResult{NewSource: "*gone*", OldSource: nbStr("print(1 + 1)"), CellID: "calc", CellType: "markdown", Language: "python", EditMode: "replace"},
	}, {
		name: "insert after a cell", fixture: "v45.ipynb", ids: []string{"calc", "new1"},
		in:   map[string]any{"cell_id": "intro", "new_source": "x = 1\ny = 2", "cell_type": "code", "edit_mode": "insert"},
		text: "Inserted cell new1 with x = 1\ny = 2",
		want: NotebookEditResult{NewSource: "x = 1\ny = 2", CellID: "new1", CellType: "code", Language: "python", EditMode: "insert"},
	}, {
		name: "insert at the top", fixture: "v45.ipynb", ids: []string{"top1"},
		in:   map[string]any{"new_source": "", "cell_type": "markdown", "edit_mode": "insert"},
		text: "Inserted cell top1 with ",
		want: NotebookEditResult{NewSource: "", CellID: "top1", CellType: "markdown", Language: "python", EditMode: "insert"},
	}, {
		name: "delete", fixture: "v45.ipynb",
		in:   map[string]any{"cell_id": "calc", "new_source": "", "edit_mode": "delete"},
		text: "Deleted cell calc",
		want: NotebookEditResult{OldSource: nbStr("print(1 + 1)"), CellID: "calc", CellType: "code", Language: "python", EditMode: "delete"},
	}, {
		name: "v4.4 replace by index", fixture: "v44.ipynb",
		in:   map[string]any{"cell_id": "cell-1", "new_source": "Better notes\non two lines"},
		text: "Updated cell cell-1 with Better notes\non two lines",
		want: NotebookEditResult{NewSource: "Better notes\non two lines", OldSource: nbStr("Some notes"), CellID: "cell-1", CellType: "markdown", Language: "R", EditMode: "replace"},
	}, {
		name: "v4.4 insert without ids", fixture: "v44.ipynb",
		in:   map[string]any{"cell_id": "cell-0", "new_source": "y <- 2", "cell_type": "code", "edit_mode": "insert"},
		text: "Inserted cell cell-1 with y <- 2",
		want: NotebookEditResult{NewSource: "y <- 2", CellID: "cell-1", CellType: "code", Language: "R", EditMode: "insert"},
	}, {
		name: "v4.4 replace just past the end", fixture: "v44.ipynb",
		in:   map[string]any{"cell_id": "cell-2", "new_source": "z <- 3"},
		text: "Inserted cell cell-2 with z <- 3",
		want: NotebookEditResult{NewSource: "z <- 3", CellID: "cell-2", CellType: "code", Language: "R", EditMode: "replace"},
	}, {
		name: "v4.4 delete by index", fixture: "v44.ipynb",
		in:   map[string]any{"cell_id": "cell-0", "new_source": "", "edit_mode": "delete"},
		text: "Deleted cell cell-0",
		want: NotebookEditResult{OldSource: nbStr("x <- 1"), CellID: "cell-0", CellType: "code", Language: "R", EditMode: "delete"},
	}, {
		name: "compact", fixture: "compact.ipynb",
		in:   map[string]any{"cell_id": "cell-0", "new_source": "a = <2>"},
		text: "Updated cell cell-0 with a = <2>",
		want: NotebookEditResult{NewSource: "a = <2>", OldSource: nbStr("a = 1"), CellID: "cell-0", CellType: "code", Language: "python", EditMode: "replace"},
	}, {
		name: "empty notebook", fixture: "empty.ipynb",
		in:   map[string]any{"new_source": "first\n", "cell_type": "markdown", "edit_mode": "insert"},
		text: "Inserted cell cell-0 with first\n",
		want: NotebookEditResult{NewSource: "first\n", CellID: "cell-0", CellType: "markdown", Language: "python", EditMode: "insert"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.ids != nil {
				nbTestIDs(t, tc.ids...)
			}
			dir := t.TempDir()
			path, orig := nbTestCopy(t, dir, tc.fixture)
			env := &tool.Env{Cwd: dir, Home: dir, State: &tool.State{}}
			in := map[string]any{"notebook_path": path}
			for k, v := range tc.in {
				in[k] = v
			}
			r := sideRun(t, context.Background(), NotebookEdit(), env, in)
			if r.IsError {
				t.Fatalf("error: %s", r.Text())
			}
			if got, want := r.Text(), strings.ReplaceAll(tc.text, "$NB", path); got != want {
				t.Errorf("text %q, want %q", got, want)
			}
			onDisk, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			want.NotebookPath = path
			want.OriginalFile = orig
			want.UpdatedFile = string(onDisk)
			if diff := cmp.Diff(want, r.Structured); diff != "" {
				t.Errorf("tool_use_result (-want +got):\n%s", diff)
			}
			var v any
			if err := json.Unmarshal(onDisk, &v); err != nil {
				t.Errorf("the notebook is no longer JSON: %v", err)
			}
			sideGolden(t, "notebook/want/"+strings.ReplaceAll(tc.name, " ", "_")+".ipynb", onDisk)
		})
	}
}

func TestNotebookEditErrors(t *testing.T) {
	dir := t.TempDir()
	v45, _ := nbTestCopy(t, dir, "v45.ipynb")
	v44, _ := nbTestCopy(t, dir, "v44.ipynb")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.ipynb", `{"cells": [`)
	noCells := write("nocells.ipynb", `{"metadata": {}}`)
	cellsObj := write("cellsobj.ipynb", `{"cells": {}}`)
	cellNum := write("cellnum.ipynb", `{"cells": [1]}`)
	array := write("array.ipynb", `[]`)
	text := write("notes.txt", "hello")
	if err := os.Mkdir(filepath.Join(dir, "dir.ipynb"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"relative path", map[string]any{"notebook_path": "v45.ipynb", "cell_id": "calc", "new_source": "x"},
			`notebook_path must be an absolute path, not "v45.ipynb".`},
		{"not a notebook", map[string]any{"notebook_path": text, "cell_id": "calc", "new_source": "x"},
			text + " is not a Jupyter notebook (.ipynb file). Use Edit to change other files."},
		{"missing", map[string]any{"notebook_path": filepath.Join(dir, "none.ipynb"), "cell_id": "c", "new_source": "x"},
			"The notebook " + filepath.Join(dir, "none.ipynb") + " does not exist."},
		{"directory", map[string]any{"notebook_path": filepath.Join(dir, "dir.ipynb"), "cell_id": "c", "new_source": "x"},
			"Cannot edit " + filepath.Join(dir, "dir.ipynb") + ": it is a directory, not a notebook."},
		{"invalid JSON", map[string]any{"notebook_path": bad, "cell_id": "c", "new_source": "x"},
			"Cannot edit " + bad + ": the file is not valid JSON (unexpected end of JSON input), so it is not a notebook"},
		{"no cells", map[string]any{"notebook_path": noCells, "cell_id": "c", "new_source": "x"},
			"Cannot edit " + noCells + `: the file is not a Jupyter notebook: it has no "cells" list`},
		{"cells not a list", map[string]any{"notebook_path": cellsObj, "cell_id": "c", "new_source": "x"},
			"Cannot edit " + cellsObj + `: the file is not a Jupyter notebook: "cells" is not a list`},
		{"cell not an object", map[string]any{"notebook_path": cellNum, "cell_id": "c", "new_source": "x"},
			"Cannot edit " + cellNum + ": the file is not a valid Jupyter notebook: cell 0 is not an object"},
		{"top level not an object", map[string]any{"notebook_path": array, "cell_id": "c", "new_source": "x"},
			"Cannot edit " + array + ": the file is not a Jupyter notebook: it is not a JSON object"},
		{"insert without type", map[string]any{"notebook_path": v45, "new_source": "x", "edit_mode": "insert"},
			"cell_type is required when edit_mode is insert: say whether the new cell is code or markdown."},
		{"replace without id", map[string]any{"notebook_path": v45, "new_source": "x"},
			"cell_id is required to replace a cell: give the id of the cell, as Read shows it."},
		{"delete without id", map[string]any{"notebook_path": v45, "new_source": "", "edit_mode": "delete"},
			"cell_id is required to delete a cell: give the id of the cell, as Read shows it."},
		{"unknown id", map[string]any{"notebook_path": v45, "cell_id": "nope", "new_source": "x"},
			`No cell with id "nope" in ` + v45 + ". Read the notebook to see its cell ids."},
		{"index out of range", map[string]any{"notebook_path": v44, "cell_id": "cell-5", "new_source": "x"},
			`No cell with id "cell-5" in ` + v44 + ". Read the notebook to see its cell ids."},
		{"index with a leading zero", map[string]any{"notebook_path": v44, "cell_id": "cell-01", "new_source": "x"},
			`No cell with id "cell-01" in ` + v44 + ". Read the notebook to see its cell ids."},
		{"delete past the end", map[string]any{"notebook_path": v44, "cell_id": "cell-2", "new_source": "", "edit_mode": "delete"},
			v44 + " has 2 cells, so there is no cell cell-2 to delete."},
		{"insert past the end", map[string]any{"notebook_path": v44, "cell_id": "cell-2", "new_source": "", "edit_mode": "insert", "cell_type": "code"},
			v44 + " has 2 cells, so there is no cell cell-2 to insert."},
		{"bad mode", map[string]any{"notebook_path": v45, "cell_id": "calc", "new_source": "x", "edit_mode": "append"},
			"InputValidationError: NotebookEdit failed due to the following issue:\n"},
		{"missing source", map[string]any{"notebook_path": v45, "cell_id": "calc"},
			"InputValidationError: NotebookEdit failed due to the following issue:\nThe required parameter `new_source` is missing"},
	}
	env := &tool.Env{Cwd: dir, Home: dir, State: &tool.State{}}
	before := map[string][]byte{}
	for _, p := range []string{v45, v44} {
		before[p], _ = os.ReadFile(p)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sideOutcomeOf(sideRun(t, context.Background(), NotebookEdit(), env, tc.in))
			if strings.HasSuffix(tc.want, "issue:\n") && strings.HasPrefix(got.Text, tc.want) {
				got.Text = tc.want // the validator's own wording is not ours to test
			}
			if diff := cmp.Diff(sideOutcome{Text: tc.want, IsError: true}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for p, data := range before {
		if now, _ := os.ReadFile(p); !bytes.Equal(now, data) {
			t.Errorf("%s changed by a failed edit", p)
		}
	}
}

func TestNotebookEditStale(t *testing.T) {
	dir := t.TempDir()
	path, orig := nbTestCopy(t, dir, "v44.ipynb")
	env := &tool.Env{Cwd: dir, Home: dir, State: &tool.State{}}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// The session read the notebook; then it was edited twice by the tool.
	fileStateOf(env).record(resolveSymlinks(path), info, []byte(orig), false)
	for _, src := range []string{"one", "two"} {
		r := sideRun(t, context.Background(), NotebookEdit(), env, map[string]any{"notebook_path": path, "cell_id": "cell-0", "new_source": src})
		if r.IsError {
			t.Fatalf("edit %q: %s", src, r.Text())
		}
	}
	// Then someone else changed it.
	if err := os.WriteFile(path, []byte(strings.Replace(orig, "Some notes", "Other notes!", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	got := sideOutcomeOf(sideRun(t, context.Background(), NotebookEdit(), env, map[string]any{"notebook_path": path, "cell_id": "cell-0", "new_source": "three"}))
	want := sideOutcome{Text: path + " has changed on disk since you last read it. Read it again before editing it.", IsError: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNotebookEditKeepsMode(t *testing.T) {
	dir := t.TempDir()
	path, _ := nbTestCopy(t, dir, "v44.ipynb")
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	env := &tool.Env{Cwd: dir, Home: dir, State: &tool.State{}}
	if r := sideRun(t, context.Background(), NotebookEdit(), env, map[string]any{"notebook_path": path, "cell_id": "cell-0", "new_source": "q"}); r.IsError {
		t.Fatal(r.Text())
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode().Perm())
	}
}

func TestNotebookEditIndent(t *testing.T) {
	for in, want := range map[string]string{
		"{\n \"a\": 1}":        " ",
		"{\n    \"a\": 1}":     "    ",
		"{\n\t\"a\": 1}":       "\t",
		"{\"a\": 1}":           "",
		"{}":                   " ",
		"{\n}":                 " ",
		"  {\n  \"a\":\n1}":    "  ",
		"{\"a\": 1,\n\"b\":2}": "",
	} {
		if got := nbEditIndentOf([]byte(in)); got != want {
			t.Errorf("%q: indent %q, want %q", in, got, want)
		}
	}
}

func TestNotebookEditSource(t *testing.T) {
	for _, tc := range []struct {
		src    string
		asList bool
		want   string
	}{
		{"a\nb\n", true, `["a\n","b\n"]`},
		{"a\nb", true, `["a\n","b"]`},
		{"", true, `[]`},
		{"<&>", false, `"<&>"`},
	} {
		if got := string(nbEditSource(tc.src, tc.asList)); got != tc.want {
			t.Errorf("%q list=%v: %s, want %s", tc.src, tc.asList, got, tc.want)
		}
	}
}

// FuzzNotebookEdit feeds arbitrary files to the notebook parser and editor:
// they must not panic, and what they write must parse again.
func FuzzNotebookEdit(f *testing.F) {
	for _, name := range []string{"v45.ipynb", "v44.ipynb", "compact.ipynb", "empty.ipynb"} {
		data, err := os.ReadFile(filepath.Join("testdata", "notebook", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "cell-0", uint8(0))
		f.Add(data, "calc", uint8(1))
	}
	f.Add([]byte(`{"cells":[{"id":5,"source":7,"cell_type":[]}],"nbformat":"x"}`), "cell-0", uint8(2))
	f.Add([]byte(`{"cells":[{}],"metadata":[]}`), "cell-1", uint8(0))
	f.Add([]byte("\xef\xbb\xbf{\"cells\":[]}\n"), "", uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, cellID string, mode uint8) {
		in := notebookEditInput{CellID: cellID, NewSource: "x = 1\n", CellType: "code"}
		in.EditMode = []string{"replace", "insert", "delete"}[int(mode)%3]
		if in.EditMode == "replace" && mode%2 == 0 {
			in.CellType = ""
		}
		if in.CellID == "" && in.EditMode != "insert" {
			return // refused before the file is read
		}
		ed, msg := nbEditApply(data, in, "/nb.ipynb")
		if msg != "" {
			return
		}
		nb, err := nbEditParse(ed.out)
		if err != nil {
			t.Fatalf("the edited notebook does not parse: %v\n%s", err, ed.out)
		}
		want := len(mustParse(t, data).cells)
		switch in.EditMode {
		case "delete":
			want--
		case "insert":
			want++
		default:
			if ed.appended {
				want++
			}
		}
		if len(nb.cells) != want {
			t.Fatalf("%s: %d cells, want %d", in.EditMode, len(nb.cells), want)
		}
	})
}

func mustParse(t *testing.T, data []byte) *nbEditNotebook {
	nb, err := nbEditParse(data)
	if err != nil {
		t.Fatal(err)
	}
	return nb
}
