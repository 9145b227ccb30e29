package tools

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop/tool"
)

//go:embed notebookedit.md
var notebookEditDescription string

const notebookEditSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "notebook_path": {"description": "Absolute path of the Jupyter notebook (.ipynb) to change.", "type": "string"},
    "cell_id": {"description": "Id of the cell to replace or delete, or after which to insert the new cell (omit it to insert at the top). Cells without an id are named cell-N, counting from 0, as Read shows them.", "type": "string"},
    "new_source": {"description": "The new source of the cell (ignored when deleting).", "type": "string"},
    "cell_type": {"description": "Type of the cell: code or markdown. Required to insert; when replacing, changes the cell's type.", "type": "string", "enum": ["code", "markdown"]},
    "edit_mode": {"description": "replace (the default) rewrites the cell's source, insert adds a new cell, delete removes the cell.", "type": "string", "enum": ["replace", "insert", "delete"]}
  },
  "required": ["notebook_path", "new_source"],
  "additionalProperties": false
}`

const nbEditMaxFile = 100 << 20

type notebookEditInput struct {
	NotebookPath string `json:"notebook_path"`
	CellID       string `json:"cell_id,omitempty"`
	NewSource    string `json:"new_source"`
	CellType     string `json:"cell_type,omitempty"`
	EditMode     string `json:"edit_mode,omitempty"`
}

// NotebookEditResult is the tool_use_result of a NotebookEdit call.
// OriginalFile and UpdatedFile are the notebook's JSON before and after.
type NotebookEditResult struct {
	NewSource string `json:"new_source"`
	// OldSource is the source the cell had, for replace and delete.
	OldSource *string `json:"old_source,omitempty"`
	// CellID is the cell edited or deleted, or the new cell's id.
	CellID       string `json:"cell_id,omitempty"`
	CellType     string `json:"cell_type"`
	Language     string `json:"language"`
	EditMode     string `json:"edit_mode"`
	NotebookPath string `json:"notebook_path"`
	OriginalFile string `json:"original_file"`
	UpdatedFile  string `json:"updated_file"`
}

// NotebookEdit returns the NotebookEdit tool: it replaces, inserts or
// deletes one cell of a Jupyter notebook. The rest of the notebook is kept
// as it was, key order and all, and the file is written back with its own
// indentation (one space, as Jupyter writes, when it cannot be told).
// Replacing a code cell clears its outputs and execution count. A notebook
// that changed on disk since the session last read it is refused.
func NotebookEdit() tool.Tool {
	return tool.New("NotebookEdit", notebookEditDescription, runNotebookEdit, &tool.Options{
		Schema: json.RawMessage(notebookEditSchema),
	})
}

// nbEditNewID makes the id of an inserted cell; tests replace it.
var nbEditNewID = func() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func runNotebookEdit(ctx context.Context, in notebookEditInput, call *tool.Call) (tool.Result, error) {
	env := call.Env
	path, err := requireAbs(env, in.NotebookPath)
	if err != nil {
		return tool.Error(fmt.Sprintf("notebook_path must be an absolute path, not %q.", in.NotebookPath)), nil
	}
	if !strings.EqualFold(filepath.Ext(path), ".ipynb") {
		return tool.Error(fmt.Sprintf("%s is not a Jupyter notebook (.ipynb file). Use Edit to change other files.", path)), nil
	}
	if in.EditMode == "" {
		in.EditMode = "replace"
	}
	if in.EditMode == "insert" && in.CellType == "" {
		return tool.Error("cell_type is required when edit_mode is insert: say whether the new cell is code or markdown."), nil
	}
	if in.EditMode != "insert" && in.CellID == "" {
		return tool.Error(fmt.Sprintf("cell_id is required to %s a cell: give the id of the cell, as Read shows it.", in.EditMode)), nil
	}

	target := targetOf(call, path)
	dir, err := target.dir()
	var info fs.FileInfo
	if err == nil {
		defer dir.close()
		info, err = dir.stat()
	}
	switch {
	case err != nil && os.IsNotExist(err):
		return tool.Error(fmt.Sprintf("The notebook %s does not exist.", path)), nil
	case err != nil:
		return tool.Error(fmt.Sprintf("Cannot edit %s: %v", path, err)), nil
	case info.IsDir():
		return tool.Error(fmt.Sprintf("Cannot edit %s: it is a directory, not a notebook.", path)), nil
	case !info.Mode().IsRegular():
		return tool.Error(fmt.Sprintf("Cannot edit %s: it is not a regular file.", path)), nil
	case info.Size() > nbEditMaxFile:
		return tool.Error(fmt.Sprintf("Cannot edit %s: the notebook is larger than 100 MB.", path)), nil
	}
	data, err := dir.read(info.Size())
	if err != nil {
		return tool.Error(fmt.Sprintf("Cannot edit %s: %v", path, err)), nil
	}
	key := target.key()
	state := fileStateOf(env)
	if _, stale := state.staleness(key, info, data); stale {
		return tool.Error(fmt.Sprintf("%s has changed on disk since you last read it. Read it again before editing it.", path)), nil
	}

	ed, msg := nbEditApply(data, in, path)
	if msg != "" {
		return tool.Error(msg), nil
	}
	if r, ok := beforeChange(call, target); !ok {
		return r, nil
	}
	if err := target.write(ed.out, info.Mode().Perm()); err != nil {
		return tool.Error(fmt.Sprintf("Cannot write %s: %v", path, err)), nil
	}
	state.recordFile(key, ed.out, false)

	res := NotebookEditResult{
		NewSource: in.NewSource, OldSource: ed.oldSource, CellID: ed.cellID,
		CellType: ed.cellType, Language: ed.language, EditMode: in.EditMode,
		NotebookPath: path, OriginalFile: string(data), UpdatedFile: string(ed.out),
	}
	// The reference's wording (testdata/conformance/t_notebook_edit).
	var text string
	switch {
	case in.EditMode == "delete":
		text = fmt.Sprintf("Deleted cell %s", in.CellID)
	case in.EditMode == "insert" || ed.appended:
		text = fmt.Sprintf("Inserted cell %s with %s", ed.cellID, in.NewSource)
	default:
		text = fmt.Sprintf("Updated cell %s with %s", in.CellID, in.NewSource)
	}
	r := tool.Text(text)
	r.Structured = res
	return r, nil
}

// nbEdited is the outcome of an edit.
type nbEdited struct {
	out       []byte
	oldSource *string
	cellID    string
	cellType  string
	language  string
	converted bool // a replace changed the cell's type
	appended  bool // a replace of cell-N with N = number of cells added one
}

// nbEditApply performs the edit on the notebook's bytes. It returns the new
// bytes, or a message for the model saying why it cannot.
func nbEditApply(data []byte, in notebookEditInput, path string) (*nbEdited, string) {
	nb, err := nbEditParse(data)
	if err != nil {
		return nil, fmt.Sprintf("Cannot edit %s: %v", path, err)
	}
	ed := &nbEdited{language: nb.language()}
	mode := in.EditMode
	idx := 0
	if in.CellID != "" {
		i, ok := nb.find(in.CellID)
		switch {
		case !ok:
			return nil, fmt.Sprintf("No cell with id %q in %s. Read the notebook to see its cell ids.", in.CellID, path)
		case i == len(nb.cells) && mode == "replace":
			mode = "insert" // replacing the cell just past the end adds one
			ed.appended = true
			if in.CellType == "" {
				in.CellType = "code"
			}
		case i == len(nb.cells):
			return nil, fmt.Sprintf("%s has %d cells, so there is no cell %s to %s.", path, len(nb.cells), in.CellID, mode)
		}
		idx = i
		if mode == "insert" && !ed.appended {
			idx = i + 1
		}
	}

	switch mode {
	case "replace":
		cell := nb.cells[idx]
		old := cell.source()
		ed.oldSource = &old
		ed.cellID = in.CellID
		was := cell.str("cell_type")
		now := was
		if in.CellType != "" && in.CellType != was {
			now = in.CellType
			ed.converted = true
			cell.setSorted("cell_type", nbEditJSON(now))
			if now != "code" {
				cell.del("outputs")
				cell.del("execution_count")
			}
		}
		if now == "code" {
			cell.setSorted("execution_count", json.RawMessage("null"))
			cell.setSorted("outputs", json.RawMessage("[]"))
		}
		cell.setSorted("source", nbEditSource(in.NewSource, cell.sourceIsList()))
		nb.cells[idx] = cell
		ed.cellType = now
	case "insert":
		asList := true
		switch {
		case idx > 0:
			asList = nb.cells[idx-1].sourceIsList()
		case len(nb.cells) > 0:
			asList = nb.cells[0].sourceIsList()
		}
		cell := nbEditObject{}
		cell.setSorted("cell_type", nbEditJSON(in.CellType))
		if nb.wantsIDs() {
			id := nb.freshID()
			cell.setSorted("id", nbEditJSON(id))
			ed.cellID = id
		} else {
			ed.cellID = "cell-" + strconv.Itoa(idx)
		}
		cell.setSorted("metadata", json.RawMessage("{}"))
		if in.CellType == "code" {
			cell.setSorted("execution_count", json.RawMessage("null"))
			cell.setSorted("outputs", json.RawMessage("[]"))
		}
		cell.setSorted("source", nbEditSource(in.NewSource, asList))
		nb.cells = append(nb.cells[:idx], append([]nbEditObject{cell}, nb.cells[idx:]...)...)
		ed.cellType = in.CellType
	case "delete":
		cell := nb.cells[idx]
		old := cell.source()
		ed.oldSource = &old
		ed.cellID = in.CellID
		ed.cellType = cell.str("cell_type")
		nb.cells = append(nb.cells[:idx], nb.cells[idx+1:]...)
	}
	ed.out = nb.encode()
	return ed, ""
}

// nbEditNotebook is a parsed notebook: the top-level object in its key
// order, and its cells.
type nbEditNotebook struct {
	top    nbEditObject
	cells  []nbEditObject
	indent string // "" for a compact file
	eol    bool   // the file ends with a newline
	bom    bool
}

func nbEditParse(data []byte) (*nbEditNotebook, error) {
	nb := &nbEditNotebook{}
	if rest, ok := bytes.CutPrefix(data, []byte("\xef\xbb\xbf")); ok {
		nb.bom = true
		data = rest
	}
	var probe any
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("the file is not valid JSON (%v), so it is not a notebook", err)
	}
	top, err := nbEditParseObject(data)
	if err != nil {
		return nil, fmt.Errorf("the file is not a Jupyter notebook: %v", err)
	}
	nb.top = top
	raw, ok := top.get("cells")
	if !ok {
		return nil, fmt.Errorf("the file is not a Jupyter notebook: it has no \"cells\" list")
	}
	var cells []json.RawMessage
	if err := json.Unmarshal(raw, &cells); err != nil || cells == nil {
		return nil, fmt.Errorf("the file is not a Jupyter notebook: \"cells\" is not a list")
	}
	for i, c := range cells {
		obj, err := nbEditParseObject(c)
		if err != nil {
			return nil, fmt.Errorf("the file is not a valid Jupyter notebook: cell %d is not an object", i)
		}
		nb.cells = append(nb.cells, obj)
	}
	nb.indent = nbEditIndentOf(data)
	nb.eol = bytes.HasSuffix(data, []byte("\n"))
	return nb, nil
}

// nbEditIndentOf returns the indentation of the first key of the file's
// top-level object: "" when that key is on the line of the opening brace,
// one space when there is no key to tell by.
func nbEditIndentOf(data []byte) string {
	open := bytes.IndexByte(data, '{')
	rest := data[open+1:]
	if t := bytes.TrimSpace(rest); len(t) > 0 && t[0] == '}' {
		return " " // an empty object: nothing to tell by
	}
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 || len(bytes.TrimSpace(rest[:nl])) > 0 {
		return "" // the first key is on the line of the brace
	}
	line := rest[nl+1:]
	n := 0
	for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
		n++
	}
	if n == 0 || (n < len(line) && line[n] == '}') {
		return " "
	}
	return string(line[:n])
}

// language is the notebook's kernel language, python when unknown.
func (nb *nbEditNotebook) language() string {
	raw, _ := nb.top.get("metadata")
	var md struct {
		LanguageInfo struct {
			Name string `json:"name"`
		} `json:"language_info"`
		Kernelspec struct {
			Language string `json:"language"`
		} `json:"kernelspec"`
	}
	_ = json.Unmarshal(raw, &md)
	switch {
	case md.LanguageInfo.Name != "":
		return md.LanguageInfo.Name
	case md.Kernelspec.Language != "":
		return md.Kernelspec.Language
	}
	return "python"
}

// wantsIDs reports whether new cells get an id: nbformat 4.5 and later, or
// a notebook whose cells already have them.
func (nb *nbEditNotebook) wantsIDs() bool {
	num := func(k string) int {
		raw, _ := nb.top.get(k)
		var f float64
		_ = json.Unmarshal(raw, &f)
		return int(f)
	}
	if major, minor := num("nbformat"), num("nbformat_minor"); major > 4 || (major == 4 && minor >= 5) {
		return true
	}
	for _, c := range nb.cells {
		if c.str("id") != "" {
			return true
		}
	}
	return false
}

func (nb *nbEditNotebook) freshID() string {
	for {
		id := nbEditNewID()
		if _, taken := nb.find(id); !taken {
			return id
		}
	}
}

// find returns the index of the cell called id: the cell with that id, or
// for "cell-N" the cell at index N. N may equal the number of cells.
func (nb *nbEditNotebook) find(id string) (int, bool) {
	for i, c := range nb.cells {
		if c.str("id") == id {
			return i, true
		}
	}
	if n, ok := strings.CutPrefix(id, "cell-"); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i <= len(nb.cells) && strconv.Itoa(i) == n {
			return i, true
		}
	}
	return 0, false
}

func (nb *nbEditNotebook) encode() []byte {
	raws := make([]json.RawMessage, len(nb.cells))
	for i, c := range nb.cells {
		raws[i] = c.marshal()
	}
	var cells bytes.Buffer
	cells.WriteByte('[')
	for i, r := range raws {
		if i > 0 {
			cells.WriteByte(',')
		}
		cells.Write(r)
	}
	cells.WriteByte(']')
	nb.top.set("cells", cells.Bytes())
	compact := nb.top.marshal()
	var out bytes.Buffer
	if nb.bom {
		out.WriteString("\xef\xbb\xbf")
	}
	if nb.indent == "" {
		_ = json.Compact(&out, compact)
	} else {
		_ = json.Indent(&out, compact, "", nb.indent)
	}
	if nb.eol {
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// nbEditObject is a JSON object that keeps its keys in order and its values
// as they were written.
type nbEditObject []nbEditField

type nbEditField struct {
	key string
	val json.RawMessage
}

func nbEditParseObject(data []byte) (nbEditObject, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("it is not a JSON object")
	}
	obj := nbEditObject{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		obj = append(obj, nbEditField{key: k, val: v})
	}
	return obj, nil
}

func (o nbEditObject) get(k string) (json.RawMessage, bool) {
	for _, f := range o {
		if f.key == k {
			return f.val, true
		}
	}
	return nil, false
}

// str returns the field k when it is a string, else "".
func (o nbEditObject) str(k string) string {
	raw, _ := o.get(k)
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// set replaces the value of k, or adds k at the end.
func (o *nbEditObject) set(k string, v json.RawMessage) {
	for i := range *o {
		if (*o)[i].key == k {
			(*o)[i].val = v
			return
		}
	}
	*o = append(*o, nbEditField{key: k, val: v})
}

// setSorted replaces the value of k, or adds k before the first key that
// sorts after it, so that a sorted object (as Jupyter writes) stays sorted.
func (o *nbEditObject) setSorted(k string, v json.RawMessage) {
	if _, ok := o.get(k); ok {
		o.set(k, v)
		return
	}
	i := 0
	for i < len(*o) && (*o)[i].key < k {
		i++
	}
	*o = append((*o)[:i], append(nbEditObject{{key: k, val: v}}, (*o)[i:]...)...)
}

func (o *nbEditObject) del(k string) {
	for i := range *o {
		if (*o)[i].key == k {
			*o = append((*o)[:i], (*o)[i+1:]...)
			return
		}
	}
}

func (o nbEditObject) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(nbEditJSON(f.key))
		b.WriteByte(':')
		b.Write(f.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// source returns the cell's source as one string.
func (o nbEditObject) source() string {
	raw, _ := o.get("source")
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []string
	_ = json.Unmarshal(raw, &parts)
	return strings.Join(parts, "")
}

// sourceIsList reports whether the cell keeps its source as a list of
// lines, as Jupyter writes it.
func (o nbEditObject) sourceIsList() bool {
	raw, ok := o.get("source")
	if !ok {
		return true
	}
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '['
}

// nbEditSource encodes a source as a string, or as a list of lines each
// ending with its newline.
func nbEditSource(src string, asList bool) json.RawMessage {
	if !asList {
		return nbEditJSON(src)
	}
	lines := strings.SplitAfter(src, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return nbEditJSON(lines)
}

// nbEditJSON encodes v without escaping HTML characters, as Jupyter does.
func nbEditJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
