package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentloop/agentloop/tool"
)

//go:embed read.md
var readDescription string

const readSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "file_path": {"description": "Absolute path of the file to read.", "type": "string"},
    "offset": {"description": "Line number to start at (1 is the first line). Give it only for files too long to read at once.", "type": "integer", "minimum": 0, "maximum": 9007199254740991},
    "limit": {"description": "How many lines to read. Give it only for files too long to read at once.", "type": "integer", "exclusiveMinimum": 0, "maximum": 9007199254740991},
    "pages": {"description": "PDF files only: the pages to read, such as \"3\" or \"1-5\".", "type": "string"},
    "allow_large": {"description": "Set to true to read a file or range beyond the usual size limit in one call. Costs a lot of context; prefer offset and limit.", "type": "boolean"}
  },
  "required": ["file_path"],
  "additionalProperties": false
}`

// Read limits.
const (
	readDefaultLimit = 2000      // lines returned when no limit is given
	readMaxLineRunes = 2000      // longer lines are cut
	readMaxFileSize  = 256 << 10 // bytes of a file read whole without offset/limit
	readMaxOutput    = 256 << 10 // bytes of text one call may return
)

type readInput struct {
	FilePath   string   `json:"file_path"`
	Offset     *float64 `json:"offset,omitempty"`
	Limit      *float64 `json:"limit,omitempty"`
	Pages      *string  `json:"pages,omitempty"`
	AllowLarge bool     `json:"allow_large,omitempty"`
}

// ReadTextResult is the tool_use_result of a Read of a text file.
type ReadTextResult struct {
	Type string       `json:"type"` // "text"
	File ReadTextFile `json:"file"`
}

// ReadTextFile describes the lines a Read returned. Content holds them
// joined by "\n", with CRLF line ends shown as LF.
type ReadTextFile struct {
	FilePath   string `json:"filePath"`
	Content    string `json:"content"`
	NumLines   int    `json:"numLines"`
	StartLine  int    `json:"startLine"`
	TotalLines int    `json:"totalLines"`
}

// Read returns the Read tool: it shows a file with line numbers (cat -n
// style), images as image blocks, PDFs as document blocks and Jupyter
// notebooks cell by cell, and records what the model saw in the session's
// file state so that Edit and Write can tell when a file changed behind its
// back. It only reads.
func Read() tool.Tool {
	return tool.New("Read", readDescription, runRead, &tool.Options{
		ReadOnly: true,
		Schema:   json.RawMessage(readSchema),
	})
}

func runRead(ctx context.Context, in readInput, call *tool.Call) (tool.Result, error) {
	env := call.Env
	path, err := requireAbs(env, in.FilePath)
	if err != nil {
		return tool.Error(relativePathMessage(env, in.FilePath)), nil
	}
	target := targetOf(call, path)
	if readDenied(env, "Read", path, target.io) {
		return tool.Error(readDeniedMessage("Read", path)), nil
	}
	dir, err := target.dir()
	var info fs.FileInfo
	if err == nil {
		defer dir.close()
		info, err = dir.stat()
	}
	switch {
	case isNotExist(err):
		return tool.Error(notExistMessage(env, "File")), nil
	case err != nil:
		return tool.Error(fmt.Sprintf("Cannot read %s: %v", path, pathErrCause(err))), nil
	case info.IsDir():
		return tool.Error(fmt.Sprintf("Cannot read %s: it is a directory, not a file. To see what it holds, list it with Glob or with ls in Bash.", path)), nil
	case !info.Mode().IsRegular():
		return tool.Error(fmt.Sprintf("Cannot read %s: it is not a regular file (%s).", path, specialFileKind(info.Mode()))), nil
	}
	key := target.key()
	ext := strings.ToLower(filepath.Ext(path))
	if in.Pages != nil && ext != ".pdf" {
		return tool.Error(fmt.Sprintf("The pages parameter applies only to PDF files, and %s is not one. Use offset and limit to read part of a text file.", path)), nil
	}
	switch {
	case imageMediaType(ext) != "":
		return readImage(dir, path, key, ext, info, env)
	case ext == ".pdf":
		return readPDF(dir, path, key, in.Pages, info, env)
	case ext == ".ipynb":
		return readNotebook(dir, path, key, in.AllowLarge, info, env)
	case readBinaryExts()[ext]:
		return tool.Error(binaryMessage(path, ext)), nil
	}

	whole := in.Offset == nil && in.Limit == nil
	tooLarge := func(size int64) bool { return whole && !in.AllowLarge && size > readMaxFileSize }
	if tooLarge(info.Size()) {
		return tool.Error(readTooLargeMessage(path, info.Size())), nil
	}
	data, err := target.readText(ctx, env, dir, info.Size())
	if err != nil {
		return tool.Error(fmt.Sprintf("Cannot read %s: %v", path, pathErrCause(err))), nil
	}
	if tooLarge(int64(len(data))) { // a host's buffer may be longer than the file on disk
		return tool.Error(readTooLargeMessage(path, int64(len(data)))), nil
	}
	if isBinaryData(data) {
		return tool.Error(binaryMessage(path, "")), nil
	}
	_, text := decodeText(data)
	text = normalizeNewlines(text)

	offset := 1
	if in.Offset != nil && *in.Offset > 1 {
		offset = numArg(*in.Offset)
	}
	limit := readDefaultLimit
	if in.Limit != nil && *in.Limit >= 1 {
		limit = numArg(*in.Limit)
	}
	res := ReadTextResult{Type: "text", File: ReadTextFile{FilePath: path, StartLine: offset}}

	if text == "" {
		fileStateOf(env).record(key, info, data, false)
		r := tool.Text("<system-reminder>The file exists but is empty.</system-reminder>")
		r.Structured = res
		return r, nil
	}
	total := strings.Count(text, "\n") + 1
	res.File.TotalLines = total
	if offset > total {
		fileStateOf(env).record(key, info, data, true)
		r := tool.Text(fmt.Sprintf("<system-reminder>The file has only %d lines, so there is nothing at offset %d.</system-reminder>", total, offset))
		r.Structured = res
		return r, nil
	}
	start := offset - 1
	end := total
	if limit < total-start {
		end = start + limit
	}
	window := lineWindow(text, start, end, total)

	var b strings.Builder
	size := len(window) + numberedSize(start+1, end) // the lines, a number and a tab for each
	if in.Limit == nil && end < total {
		size += 128 // the note on the partial view
	}
	b.Grow(min(size, readMaxOutput+1024))
	var num [20]byte
	rest := window
	for i := start; i < end; i++ {
		line, next, _ := strings.Cut(rest, "\n")
		rest = next
		if i > start {
			b.WriteByte('\n')
		}
		b.Write(strconv.AppendInt(num[:0], int64(i+1), 10))
		b.WriteByte('\t')
		b.WriteString(displayLine(line))
		if b.Len() > readMaxOutput && !in.AllowLarge {
			return tool.Error(fmt.Sprintf("Lines %d-%d of %s come to more than %s, too much to return at once. Ask for fewer lines with limit, or set allow_large if you really need them all.",
				offset, end, path, fileSizeText(readMaxOutput))), nil
		}
	}
	partial := start > 0 || end < total
	if in.Limit == nil && end < total {
		fmt.Fprintf(&b, "\n\n[Partial view: lines %d-%d of %d. Read again with offset %d to continue.]", offset, end, total, end+1)
	}
	fileStateOf(env).record(key, info, data, partial)

	res.File.Content = window // the window's lines joined by newlines, a part of text
	res.File.NumLines = end - start
	r := tool.Text(b.String())
	r.Structured = res
	return r, nil
}

// numberedSize is how many bytes the numbers of lines from to to (both
// counted from 1) take in Read's output, with the tab after each: the
// exact size of what the output adds to the lines, so that the string it
// is built in, which the history keeps, has no spare capacity.
func numberedSize(from, to int) int {
	n := 0
	for lo, digits := 1, 1; lo <= to; lo, digits = lo*10, digits+1 {
		hi := lo*10 - 1
		if a, b := max(from, lo), min(to, hi); a <= b {
			n += (b - a + 1) * (digits + 1)
		}
	}
	return n
}

// displayLine prepares one line for the model: valid UTF-8, cut at
// readMaxLineRunes characters.
func displayLine(line string) string {
	line = toValidUTF8(line)
	if len(line) <= readMaxLineRunes || utf8.RuneCountInString(line) <= readMaxLineRunes {
		return line
	}
	n := 0
	for i := range line {
		if n == readMaxLineRunes {
			rest := utf8.RuneCountInString(line[i:])
			return line[:i] + fmt.Sprintf(" [line truncated: %d more characters]", rest)
		}
		n++
	}
	return line
}

func readTooLargeMessage(path string, size int64) string {
	return fmt.Sprintf("%s is %s, more than the %s that Read returns at once. Read it in parts with offset and limit, search it with Grep, or set allow_large if you really need all of it.",
		path, fileSizeText(size), fileSizeText(readMaxFileSize))
}

func relativePathMessage(env *tool.Env, p string) string {
	if p == "" {
		return "file_path is empty: give the absolute path of a file."
	}
	msg := fmt.Sprintf("file_path must be an absolute path, but %q is relative.", p)
	if cwd := envCwd(env); cwd != "" {
		msg += fmt.Sprintf(" Did you mean %s?", filepath.Join(cwd, p))
	}
	return msg
}

func binaryMessage(path, ext string) string {
	kind := "it looks like a binary file"
	if ext != "" {
		kind = fmt.Sprintf("it is a binary file (%s)", ext)
	}
	return fmt.Sprintf("Cannot read %s: %s, and Read shows only text, images, PDFs and notebooks. Inspect it with a suitable command in Bash instead (for example file, xxd or strings).", path, kind)
}

func specialFileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}

// pathErrCause drops the operation and path of an *os.PathError, which
// the messages already name.
func pathErrCause(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func fileSizeText(n int64) string {
	switch {
	case n >= 10<<20:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// numArg converts a JSON number to an int, saturating.
func numArg(f float64) int {
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f >= math.MaxInt32:
		return math.MaxInt32
	}
	return int(f)
}

// lineWindow returns lines start to end-1 (from 0) of text, which has
// total lines, joined by newlines as they are in text: the part of text
// that holds them, without the newline that ends the last when it is not
// text's last line.
func lineWindow(text string, start, end, total int) string {
	from := 0
	for range start {
		from += strings.IndexByte(text[from:], '\n') + 1
	}
	if end >= total {
		return text[from:]
	}
	to := from
	for range end - start {
		to += strings.IndexByte(text[to:], '\n') + 1
	}
	return text[from : to-1]
}
