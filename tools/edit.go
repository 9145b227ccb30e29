package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/agentloop/agentloop/tool"
)

//go:embed edit.md
var editDescription string

const editSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "file_path": {"description": "Absolute path of the file to change.", "type": "string"},
    "old_string": {"description": "The exact text to replace.", "type": "string"},
    "new_string": {"description": "The text to put in its place. Must differ from old_string.", "type": "string"},
    "replace_all": {"description": "Replace every occurrence of old_string instead of exactly one.", "default": false, "type": "boolean"}
  },
  "required": ["file_path", "old_string", "new_string"],
  "additionalProperties": false
}`

type editInput struct {
	FilePath   string `json:"file_path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// EditResult is the tool_use_result of Edit. OriginalFile and the patch
// show line ends as LF; OriginalFile is nil when the edit created the file.
type EditResult struct {
	FilePath        string  `json:"filePath"`
	OldString       string  `json:"oldString"`
	NewString       string  `json:"newString"`
	OriginalFile    *string `json:"originalFile"`
	StructuredPatch []Hunk  `json:"structuredPatch"`
	UserModified    bool    `json:"userModified"`
	ReplaceAll      bool    `json:"replaceAll"`
}

// Edit returns the Edit tool: it replaces an exact string in a file, once
// (the string must then occur exactly once) or everywhere with
// replace_all. An empty old_string creates a file that does not exist yet
// (or fills an empty one).
//
// Edits keep the file's encoding and line ends: in a file with CRLF line
// ends, strings written with LF match and are written back with CRLF. A
// deletion of whole lines (empty new_string, old_string starting at the
// start of a line) also removes the line break after them. Editing a file
// the model has not read is allowed; editing one that changed on disk since
// the model read it is refused.
func Edit() tool.Tool {
	return tool.New("Edit", editDescription, runEdit, &tool.Options{
		Schema: json.RawMessage(editSchema),
	})
}

func runEdit(ctx context.Context, in editInput, call *tool.Call) (tool.Result, error) {
	env := call.Env
	path, err := requireAbs(env, in.FilePath)
	if err != nil {
		return tool.Error(relativePathMessage(env, in.FilePath)), nil
	}
	if in.OldString == in.NewString {
		return tool.Error("No changes to make: old_string and new_string are identical."), nil
	}
	if strings.EqualFold(filepath.Ext(path), ".ipynb") {
		return tool.Error(fmt.Sprintf("%s is a Jupyter notebook: change its cells with NotebookEdit instead.", path)), nil
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
	switch {
	case isNotExist(err):
		if in.OldString != "" {
			return tool.Error(notExistMessage(env, "File")), nil
		}
		if r, ok := beforeChange(call, target); !ok {
			return r, nil
		}
		return createByEdit(ctx, env, target, key, in, state)
	case err != nil:
		return tool.Error(fmt.Sprintf("Cannot edit %s: %v", path, pathErrCause(err))), nil
	case info.IsDir():
		return tool.Error(fmt.Sprintf("Cannot edit %s: it is a directory.", path)), nil
	case !info.Mode().IsRegular():
		return tool.Error(fmt.Sprintf("Cannot edit %s: it is not a regular file (%s).", path, specialFileKind(info.Mode()))), nil
	}

	data, err := target.readText(ctx, env, dir, info.Size())
	if err != nil {
		return tool.Error(fmt.Sprintf("Cannot edit %s: %v", path, pathErrCause(err))), nil
	}
	if isBinaryData(data) {
		return tool.Error(fmt.Sprintf("Cannot edit %s: it looks like a binary file.", path)), nil
	}
	known, stale := state.staleness(key, info, data)
	if stale {
		return tool.Error(modifiedSinceReadMessage(path)), nil
	}
	prev, _ := state.get(key)
	enc, text := decodeText(data)

	var updated string
	count := 1
	if in.OldString == "" {
		if strings.TrimSpace(text) != "" {
			return tool.Error(fmt.Sprintf("Cannot create %s: it already exists and is not empty. To change it, give the text to replace in old_string.", path)), nil
		}
		updated = in.NewString
	} else {
		var oldS, newS string
		oldS, newS, count = findEdit(text, in.OldString, in.NewString)
		switch {
		case count == 0:
			return tool.Error(fmt.Sprintf("String to replace not found in %s. old_string must match the file exactly, including whitespace and indentation (without the line numbers Read adds).\nString: %s", path, in.OldString)), nil
		case count > 1 && !in.ReplaceAll:
			return tool.Error(fmt.Sprintf("Found %d matches of the string to replace in %s, but replace_all is false. Either set replace_all to true to change every one, or add surrounding lines to old_string so that it matches exactly once.\nString: %s", count, path, in.OldString)), nil
		}
		updated = replaceOccurrences(text, oldS, newS, in.ReplaceAll)
	}

	if r, ok := beforeChange(call, target); !ok {
		return r, nil
	}
	out := encodeText(enc, updated)
	if err := target.writeText(ctx, env, out, info.Mode().Perm()); err != nil {
		return tool.Error(fmt.Sprintf("Cannot write %s: %v", path, pathErrCause(err))), nil
	}
	state.recordFile(key, out, known && prev.Partial)

	msg := "The file " + path + " has been updated successfully."
	if in.ReplaceAll {
		// The reference's wording (testdata/conformance/t_edit_replace_all).
		msg = "The file " + path + " has been updated. All occurrences were successfully replaced."
	}
	if known {
		msg += stateCurrentNote
	}
	orig := normalizeNewlines(text)
	r := tool.Text(msg)
	r.Structured = EditResult{
		FilePath: path, OldString: in.OldString, NewString: in.NewString,
		OriginalFile:    &orig,
		StructuredPatch: structuredPatch(orig, normalizeNewlines(updated)),
		ReplaceAll:      in.ReplaceAll,
	}
	return r, nil
}

// createByEdit handles an empty old_string on a missing file: the file is
// created with new_string.
func createByEdit(ctx context.Context, env *tool.Env, target fileTarget, key string, in editInput, state *fileState) (tool.Result, error) {
	path := target.path
	if err := target.mkdirParent(); err != nil {
		return tool.Error(fmt.Sprintf("Cannot create the directory for %s: %v", path, pathErrCause(err))), nil
	}
	data := []byte(in.NewString)
	if err := target.writeText(ctx, env, data, 0o644); err != nil {
		return tool.Error(fmt.Sprintf("Cannot write %s: %v", path, pathErrCause(err))), nil
	}
	state.recordFile(key, data, false)
	r := tool.Text("The file " + path + " has been updated successfully." + stateCurrentNote)
	r.Structured = EditResult{
		FilePath: path, OldString: in.OldString, NewString: in.NewString,
		StructuredPatch: structuredPatch("", normalizeNewlines(in.NewString)),
		ReplaceAll:      in.ReplaceAll,
	}
	return r, nil
}

// findEdit finds how old occurs in text and returns the strings to replace
// and to insert, adapted to the file's line ends, with the number of
// (non-overlapping) occurrences. In a file that uses CRLF, LF in old and new
// becomes CRLF; CRLF in old also matches LF line ends.
func findEdit(text, old, new string) (string, string, int) {
	crlf := usesCRLF(text)
	if n := strings.Count(text, old); n > 0 {
		if crlf {
			new = toCRLF(new)
		}
		return old, new, n
	}
	if strings.Contains(text, "\r\n") && strings.Contains(old, "\n") {
		o := toCRLF(old)
		if n := strings.Count(text, o); n > 0 {
			return o, toCRLF(new), n
		}
	}
	if strings.Contains(old, "\r\n") {
		o := normalizeNewlines(old)
		if n := strings.Count(text, o); n > 0 {
			if crlf {
				return o, toCRLF(new), n
			}
			return o, normalizeNewlines(new), n
		}
	}
	return old, new, 0
}

// usesCRLF reports whether most line ends of s are CRLF.
func usesCRLF(s string) bool {
	crlf := strings.Count(s, "\r\n")
	return crlf > 0 && crlf >= strings.Count(s, "\n")-crlf
}

func toCRLF(s string) string {
	return strings.ReplaceAll(normalizeNewlines(s), "\n", "\r\n")
}

// replaceOccurrences replaces the first occurrence of old in text with new,
// or every occurrence when all is set, scanning left to right like
// strings.Replace. One refinement: when new is empty and old neither starts
// nor ends with a line break, an occurrence that starts a line takes the
// line break after it along, so that deleting whole lines leaves no empty
// line behind.
func replaceOccurrences(text, old, new string, all bool) string {
	wholeLines := new == "" && old != "" &&
		old[0] != '\n' && old[0] != '\r' && old[len(old)-1] != '\n' && old[len(old)-1] != '\r'
	var b strings.Builder
	b.Grow(len(text))
	i := 0
	for {
		j := strings.Index(text[i:], old)
		if j < 0 {
			break
		}
		j += i
		b.WriteString(text[i:j])
		b.WriteString(new)
		k := j + len(old)
		if wholeLines && (j == 0 || text[j-1] == '\n') {
			switch {
			case strings.HasPrefix(text[k:], "\r\n"):
				k += 2
			case strings.HasPrefix(text[k:], "\n"):
				k++
			}
		}
		i = k
		if !all {
			break
		}
	}
	b.WriteString(text[i:])
	return b.String()
}
