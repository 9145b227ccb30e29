package tools

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// PDFs are sent whole as a document block, which the Messages API reads
// natively (text and page images). The API takes at most 100 pages and
// 32 MB per request.
const (
	pdfMaxBytes = 20 << 20
	pdfMaxPages = 100
)

// ReadPDFResult is the tool_use_result of a Read of a PDF.
type ReadPDFResult struct {
	Type string      `json:"type"` // "pdf"
	File ReadPDFFile `json:"file"`
}

// ReadPDFFile is the document as sent to the model.
type ReadPDFFile struct {
	FilePath     string `json:"filePath"`
	Base64       string `json:"base64"`
	OriginalSize int64  `json:"originalSize"`
}

func readPDF(dir *targetDir, path, key string, pages *string, info os.FileInfo, env *tool.Env) (tool.Result, error) {
	if pages != nil {
		if _, _, ok := parsePageRange(*pages); !ok {
			return tool.Error(fmt.Sprintf("Invalid pages value %q: give one page (\"3\") or a range (\"1-5\").", *pages)), nil
		}
	}
	if info.Size() == 0 {
		return tool.Error(fmt.Sprintf("Cannot read %s: the PDF file is empty.", path)), nil
	}
	if info.Size() > pdfMaxBytes {
		return tool.Error(fmt.Sprintf("Cannot read %s: the PDF is %s, more than the %s that can be sent. Extract its text with a command in Bash (such as pdftotext) instead.",
			path, fileSizeText(info.Size()), fileSizeText(pdfMaxBytes))), nil
	}
	data, err := dir.read(info.Size())
	if err != nil {
		return tool.Error(fmt.Sprintf("Cannot read %s: %v", path, pathErrCause(err))), nil
	}
	if !bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("%PDF-")) {
		return tool.Error(fmt.Sprintf("Cannot read %s: it has a .pdf name but is not a PDF document.", path)), nil
	}
	n := pdfPageCount(data)
	if n > pdfMaxPages {
		return tool.Error(fmt.Sprintf("Cannot read %s: the PDF has %d pages, more than the %d that can be sent at once, and reading a page range is not supported here. Extract its text with a command in Bash (such as pdftotext -f 1 -l 10) instead.",
			path, n, pdfMaxPages)), nil
	}
	fileStateOf(env).record(key, info, data, false)
	enc := base64.StdEncoding.EncodeToString(data)
	doc := model.Content{Type: model.TypeDocument, Source: &model.Source{Type: "base64", MediaType: "application/pdf", Data: enc}}
	r := tool.Result{Content: []model.Content{doc}}
	if pages != nil {
		note := "Reading selected pages is not supported here, so the whole document is attached"
		if n > 0 {
			note += fmt.Sprintf(" (%d pages)", n)
		}
		note += fmt.Sprintf("; look at pages %s in it.", *pages)
		r.Content = []model.Content{model.TextBlock(note), doc}
	}
	r.Structured = ReadPDFResult{Type: "pdf", File: ReadPDFFile{FilePath: path, Base64: enc, OriginalSize: info.Size()}}
	return r, nil
}

// parsePageRange accepts "N" or "N-M" with 1 <= N <= M.
func parsePageRange(s string) (first, last int, ok bool) {
	s = strings.TrimSpace(s)
	a, b, isRange := strings.Cut(s, "-")
	first, err := strconv.Atoi(strings.TrimSpace(a))
	if err != nil || first < 1 {
		return 0, 0, false
	}
	last = first
	if isRange {
		last, err = strconv.Atoi(strings.TrimSpace(b))
		if err != nil || last < first {
			return 0, 0, false
		}
	}
	return first, last, true
}

// pdfPatterns are the patterns pdfPageCount reads a PDF with.
type pdfPatterns struct{ pagesCount, pageObject, stream *regexp.Regexp }

var pdfOnce lazy.Value[pdfPatterns] // the value of pdf, compiled at its first use

// pdf returns the patterns pdfPageCount reads a PDF with, compiled at the
// first call rather than at start-up by every process.
func pdf() pdfPatterns {
	return pdfOnce.Get(func() pdfPatterns {
		return pdfPatterns{
			pagesCount: regexp.MustCompile(`/Type\s*/Pages\b[^>]*?/Count\s+(\d+)|/Count\s+(\d+)[^>]*?/Type\s*/Pages\b`),
			pageObject: regexp.MustCompile(`/Type\s*/Page\b`),
			stream:     regexp.MustCompile(`stream\r?\n`),
		}
	})
}

// pdfPageCount estimates the number of pages without a PDF parser: the
// largest /Count of a page tree node (the root's is the total), or else the
// number of page objects; object streams are inflated to look inside them.
// It returns 0 when it cannot tell.
func pdfPageCount(data []byte) int {
	if n := pdfCountIn(data); n > 0 {
		return n
	}
	budget := 64 << 20
	var inflated bytes.Buffer
	for _, loc := range pdf().stream.FindAllIndex(data, -1) {
		if budget <= 0 {
			break
		}
		body := data[loc[1]:]
		if end := bytes.Index(body, []byte("endstream")); end >= 0 {
			body = body[:end]
		}
		zr, err := zlib.NewReader(bytes.NewReader(body))
		if err != nil {
			continue
		}
		n, _ := io.Copy(&inflated, io.LimitReader(zr, int64(budget)))
		budget -= int(n)
		inflated.WriteByte('\n')
		zr.Close()
	}
	return pdfCountIn(inflated.Bytes())
}

func pdfCountIn(b []byte) int {
	best := 0
	for _, m := range pdf().pagesCount.FindAllSubmatch(b, -1) {
		for _, g := range m[1:] {
			if n, err := strconv.Atoi(string(g)); err == nil && n > best {
				best = n
			}
		}
	}
	if best > 0 {
		return best
	}
	return len(pdf().pageObject.FindAllIndex(b, -1))
}
