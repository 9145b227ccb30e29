package tools

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

const (
	notebookMaxFile   = 100 << 20 // larger notebooks are refused unread
	notebookMaxOutput = 10000     // characters kept of one cell output
)

// ReadNotebookResult is the tool_use_result of a Read of a Jupyter notebook.
type ReadNotebookResult struct {
	Type string           `json:"type"` // "notebook"
	File ReadNotebookFile `json:"file"`
}

// ReadNotebookFile lists the notebook's cells as shown to the model.
type ReadNotebookFile struct {
	FilePath string             `json:"filePath"`
	Cells    []ReadNotebookCell `json:"cells"`
}

// ReadNotebookCell is one cell. CellID is the cell's id, or "cell-N" (N counted
// from 0) for notebooks whose cells have none; NotebookEdit takes the same
// ids.
type ReadNotebookCell struct {
	CellType       string               `json:"cellType"`
	Source         string               `json:"source"`
	ExecutionCount *int                 `json:"execution_count,omitempty"`
	CellID         string               `json:"cell_id"`
	Language       string               `json:"language,omitempty"`
	Outputs        []ReadNotebookOutput `json:"outputs,omitempty"`
}

// ReadNotebookOutput is one output of a code cell: text, an image, or both.
type ReadNotebookOutput struct {
	OutputType string             `json:"output_type"`
	Text       string             `json:"text,omitempty"`
	Image      *ReadNotebookImage `json:"image,omitempty"`
}

// ReadNotebookImage is an image output, base64-encoded.
type ReadNotebookImage struct {
	ImageData string `json:"image_data"`
	MediaType string `json:"media_type"`
}

// readNbFile is the part of the nbformat 4 JSON that Read uses.
type readNbFile struct {
	Cells    []readNbCell `json:"cells"`
	Metadata struct {
		LanguageInfo struct {
			Name string `json:"name"`
		} `json:"language_info"`
		Kernelspec struct {
			Language string `json:"language"`
		} `json:"kernelspec"`
	} `json:"metadata"`
}

type readNbCell struct {
	CellType       string         `json:"cell_type"`
	ID             string         `json:"id"`
	Source         readNbText     `json:"source"`
	ExecutionCount *int           `json:"execution_count"`
	Outputs        []readNbOutput `json:"outputs"`
}

type readNbOutput struct {
	OutputType string                     `json:"output_type"`
	Name       string                     `json:"name"`
	Text       readNbText                 `json:"text"`
	Data       map[string]json.RawMessage `json:"data"`
	EName      string                     `json:"ename"`
	EValue     string                     `json:"evalue"`
	Traceback  []string                   `json:"traceback"`
}

// readNbText is a multiline string of nbformat: a string or a list of strings.
type readNbText string

func (t *readNbText) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = readNbText(s)
		return nil
	}
	var parts []string
	if err := json.Unmarshal(b, &parts); err != nil {
		return err
	}
	*t = readNbText(strings.Join(parts, ""))
	return nil
}

var readAnsiEscapeOnce lazy.Value[*regexp.Regexp] // the value of readAnsiEscape, compiled at its first use

// readAnsiEscape returns the pattern of the terminal escape sequences a
// notebook's outputs may hold.
func readAnsiEscape() *regexp.Regexp {
	return readAnsiEscapeOnce.Get(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;?]*[ -/]*[@-~]") })
}

func readNotebook(dir *targetDir, path, key string, allowLarge bool, info os.FileInfo, env *tool.Env) (tool.Result, error) {
	if info.Size() > notebookMaxFile {
		return tool.Error(fmt.Sprintf("Cannot read %s: the notebook is %s, too large to show. Inspect it with jq in Bash instead.", path, fileSizeText(info.Size()))), nil
	}
	data, err := dir.read(info.Size())
	if err != nil {
		return tool.Error(fmt.Sprintf("Cannot read %s: %v", path, pathErrCause(err))), nil
	}
	var nb readNbFile
	if err := json.Unmarshal(data, &nb); err != nil {
		return tool.Error(fmt.Sprintf("Cannot read %s as a Jupyter notebook: %v", path, err)), nil
	}
	lang := nb.Metadata.LanguageInfo.Name
	if lang == "" {
		lang = nb.Metadata.Kernelspec.Language
	}
	if lang == "" {
		lang = "python"
	}
	res := ReadNotebookResult{Type: "notebook", File: ReadNotebookFile{FilePath: path, Cells: []ReadNotebookCell{}}}
	// The model gets the reference's rendering: the cells, one after
	// another on their own lines, as <cell id="ID">source</cell id="ID">
	// (a cell that is not code names its type first, in <cell_type>),
	// each followed by its outputs' texts, each on a line after an empty
	// one. Images are blocks of their own after the text before them.
	var blocks []model.Content
	var text []string
	flush := func() {
		if len(text) > 0 {
			blocks = append(blocks, model.TextBlock(strings.Join(text, "\n")))
			text = nil
		}
	}
	size := 0
	for i, c := range nb.Cells {
		cell := ReadNotebookCell{CellType: c.CellType, Source: string(c.Source), CellID: c.ID}
		if cell.CellID == "" {
			cell.CellID = "cell-" + strconv.Itoa(i)
		}
		if c.CellType == "code" {
			cell.Language = lang
			cell.ExecutionCount = c.ExecutionCount
		}
		var b strings.Builder
		fmt.Fprintf(&b, "<cell id=%q>", cell.CellID)
		if c.CellType != "code" {
			fmt.Fprintf(&b, "<cell_type>%s</cell_type>", c.CellType)
		}
		fmt.Fprintf(&b, "%s</cell id=%q>", c.Source, cell.CellID)
		var images []model.Content
		for _, o := range c.Outputs {
			out := readNbOutputOf(o)
			cell.Outputs = append(cell.Outputs, out)
			if out.Text != "" {
				b.WriteString("\n\n" + out.Text)
			}
			if out.Image != nil {
				images = append(images, model.Content{Type: model.TypeImage, Source: &model.Source{
					Type: "base64", MediaType: out.Image.MediaType, Data: out.Image.ImageData,
				}})
			}
		}
		size += b.Len()
		text = append(text, b.String())
		if len(images) > 0 {
			flush()
			blocks = append(blocks, images...)
		}
		res.File.Cells = append(res.File.Cells, cell)
	}
	flush()
	if size > readMaxOutput && !allowLarge {
		return tool.Error(fmt.Sprintf("The notebook %s comes to %s of text, too much to return at once. Look at parts of it with jq in Bash (for example jq '.cells[0:10]'), or set allow_large if you really need all of it.",
			path, fileSizeText(int64(size)))), nil
	}
	if len(blocks) == 0 {
		blocks = []model.Content{model.TextBlock("<system-reminder>The notebook exists but has no cells.</system-reminder>")}
	}
	fileStateOf(env).record(key, info, data, false)
	return tool.Result{Content: blocks, Structured: res, ListContent: true}, nil
}

func readNbOutputOf(o readNbOutput) ReadNotebookOutput {
	out := ReadNotebookOutput{OutputType: o.OutputType}
	switch o.OutputType {
	case "stream":
		out.Text = string(o.Text)
	case "execute_result", "display_data":
		if raw, ok := o.Data["text/plain"]; ok {
			var t readNbText
			if json.Unmarshal(raw, &t) == nil {
				out.Text = string(t)
			}
		}
		for _, media := range []string{"image/png", "image/jpeg"} {
			if raw, ok := o.Data[media]; ok {
				var t readNbText
				if json.Unmarshal(raw, &t) == nil && t != "" {
					out.Image = &ReadNotebookImage{ImageData: strings.ReplaceAll(string(t), "\n", ""), MediaType: media}
					break
				}
			}
		}
	case "error":
		// As the reference shows it: the error line, then the traceback.
		out.Text = fmt.Sprintf("%s: %s", o.EName, o.EValue)
		if len(o.Traceback) > 0 {
			out.Text += "\n" + strings.Join(o.Traceback, "\n")
		}
	}
	out.Text = readAnsiEscape().ReplaceAllString(out.Text, "")
	if n := len([]rune(out.Text)); n > notebookMaxOutput {
		out.Text = string([]rune(out.Text)[:notebookMaxOutput]) + fmt.Sprintf("\n[output truncated: %d more characters]", n-notebookMaxOutput)
	}
	return out
}
