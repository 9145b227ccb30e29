package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"

	"github.com/agentloop/agentloop/tool"
)

//go:embed write.md
var writeDescription string

const writeSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "file_path": {"description": "Absolute path of the file to write. Missing parent directories are created.", "type": "string"},
    "content": {"description": "The complete new content of the file.", "type": "string"}
  },
  "required": ["file_path", "content"],
  "additionalProperties": false
}`

// stateCurrentNote ends the results of Write and of Edit on a file the
// model has seen: what it knows of the file is up to date.
const stateCurrentNote = " (file state is current in your context — no need to Read it back)"

type writeInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

// WriteResult is the tool_use_result of Write. OriginalFile is nil when
// the file was created.
type WriteResult struct {
	Type            string  `json:"type"` // "create" or "update"
	FilePath        string  `json:"filePath"`
	Content         string  `json:"content"`
	StructuredPatch []Hunk  `json:"structuredPatch"`
	OriginalFile    *string `json:"originalFile"`
	UserModified    bool    `json:"userModified"`
}

// Write returns the Write tool: it creates a file, or replaces the whole
// content of an existing one, creating missing parent directories. An
// existing file keeps its permissions and its encoding (a UTF-8 byte order
// mark, or UTF-16); the content is written as given, line ends included.
// If the model read the file earlier in the session and it has changed on
// disk since, Write refuses and asks for a fresh Read.
func Write() tool.Tool {
	return tool.New("Write", writeDescription, runWrite, &tool.Options{
		Schema: json.RawMessage(writeSchema),
	})
}

func runWrite(ctx context.Context, in writeInput, call *tool.Call) (tool.Result, error) {
	env := call.Env
	path, err := requireAbs(env, in.FilePath)
	if err != nil {
		return tool.Error(relativePathMessage(env, in.FilePath)), nil
	}
	target := targetOf(call, path)
	key := target.key()
	state := fileStateOf(env)

	dir, err := target.dir()
	var info fs.FileInfo
	if err == nil {
		defer dir.close()
		info, err = dir.stat()
	}
	exists := err == nil
	switch {
	case err != nil && !isNotExist(err):
		return tool.Error(fmt.Sprintf("Cannot write %s: %v", path, pathErrCause(err))), nil
	case exists && info.IsDir():
		return tool.Error(fmt.Sprintf("Cannot write %s: it is a directory.", path)), nil
	case exists && !info.Mode().IsRegular():
		return tool.Error(fmt.Sprintf("Cannot write %s: it is not a regular file (%s).", path, specialFileKind(info.Mode()))), nil
	}

	if !exists {
		if r, ok := beforeChange(call, target); !ok {
			return r, nil
		}
		if err := target.mkdirParent(); err != nil {
			return tool.Error(fmt.Sprintf("Cannot create the directory for %s: %v", path, pathErrCause(err))), nil
		}
		data := []byte(in.Content)
		if err := target.writeText(ctx, env, data, 0o644); err != nil {
			return tool.Error(fmt.Sprintf("Cannot write %s: %v", path, pathErrCause(err))), nil
		}
		state.recordFile(key, data, false)
		r := tool.Text("File created successfully at: " + path + stateCurrentNote)
		r.Structured = WriteResult{Type: "create", FilePath: path, Content: in.Content, StructuredPatch: []Hunk{}}
		return r, nil
	}

	old, err := target.readText(ctx, env, dir, info.Size())
	if err != nil {
		return tool.Error(fmt.Sprintf("Cannot write %s: reading the current content failed: %v", path, pathErrCause(err))), nil
	}
	if _, stale := state.staleness(key, info, old); stale {
		return tool.Error(modifiedSinceReadMessage(path)), nil
	}
	enc, oldText := decodeText(old)
	if isBinaryData(old) {
		enc = encUTF8
	}
	if r, ok := beforeChange(call, target); !ok {
		return r, nil
	}
	data := encodeText(enc, in.Content)
	if err := target.writeText(ctx, env, data, info.Mode().Perm()); err != nil {
		return tool.Error(fmt.Sprintf("Cannot write %s: %v", path, pathErrCause(err))), nil
	}
	state.recordFile(key, data, false)

	oldShown := normalizeNewlines(oldText)
	r := tool.Text("The file " + path + " has been updated successfully." + stateCurrentNote)
	r.Structured = WriteResult{
		Type: "update", FilePath: path, Content: in.Content,
		StructuredPatch: structuredPatch(oldShown, normalizeNewlines(in.Content)),
		OriginalFile:    &oldShown,
	}
	return r, nil
}

func modifiedSinceReadMessage(path string) string {
	return fmt.Sprintf("%s has changed on disk since you last read it (edited by the user, a formatter or another program). Read it again, then retry with its current content.", path)
}
