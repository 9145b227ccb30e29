package tools

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

func TestReadInfo(t *testing.T) {
	tl := Read()
	info := tl.Info()
	if info.Name != "Read" || !info.ReadOnly {
		t.Errorf("Info = %+v, want Read, read-only", info)
	}
	ftCheckSchema(t, tl, "read", "file_path", "offset", "limit", "pages", "allow_large")
}

// TestReadRecorded replays the reference recordings b_read_file and
// r_thinking_tool exactly.
func TestReadRecorded(t *testing.T) {
	dir := ftTempDir(t)
	for _, tc := range []struct {
		content, text, structured string
	}{
		{"line one\nline two\n", "1\tline one\n2\tline two\n3\t",
			`{"type":"text","file":{"filePath":"%s","content":"line one\nline two\n","numLines":3,"startLine":1,"totalLines":3}}`},
		{"x\n", "1\tx\n2\t",
			`{"type":"text","file":{"filePath":"%s","content":"x\n","numLines":2,"startLine":1,"totalLines":2}}`},
	} {
		p := ftWriteFile(t, dir, "f.txt", tc.content)
		r := ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p})
		if r.IsError || ftText(r) != tc.text {
			t.Errorf("Read(%q) = %q (error %v), want %q", tc.content, ftText(r), r.IsError, tc.text)
		}
		want := strings.ReplaceAll(fmt.Sprintf(tc.structured, p), "\n", `\n`)
		if got := ftStructuredJSON(t, r); got != want {
			t.Errorf("tool_use_result:\n got %s\nwant %s", got, want)
		}
	}
}

func TestReadGolden(t *testing.T) {
	dir := ftTempDir(t)
	var many strings.Builder
	for i := 1; i <= 2100; i++ {
		fmt.Fprintf(&many, "row %d\n", i)
	}
	var ten strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&ten, "line %d\n", i)
	}
	utf16 := append([]byte{0xFF, 0xFE}, []byte("h\x00i\x00\n\x00\xe9\x00\n\x00")...)

	cases := []struct {
		name  string
		setup func() string // returns file_path
		input map[string]any
	}{
		{"basic", func() string { return ftWriteFile(t, dir, "basic.txt", "line one\nline two\n") }, nil},
		{"no_trailing_newline", func() string { return ftWriteFile(t, dir, "nonl.txt", "alpha\nbeta") }, nil},
		{"crlf", func() string { return ftWriteFile(t, dir, "crlf.txt", "one\r\ntwo\r\n") }, nil},
		{"bom", func() string { return ftWriteFile(t, dir, "bom.txt", "\xEF\xBB\xBFhello\nworld\n") }, nil},
		{"utf16", func() string { return ftWriteFile(t, dir, "utf16.txt", string(utf16)) }, nil},
		{"invalid_utf8", func() string { return ftWriteFile(t, dir, "bad.txt", "ok\nbad \xff\xfe here\n") }, nil},
		{"empty", func() string { return ftWriteFile(t, dir, "empty.txt", "") }, nil},
		{"offset_limit", func() string { return ftWriteFile(t, dir, "ten.txt", ten.String()) }, map[string]any{"offset": 3, "limit": 2}},
		{"offset_zero", func() string { return ftWriteFile(t, dir, "ten.txt", ten.String()) }, map[string]any{"offset": 0, "limit": 1}},
		{"offset_past_end", func() string { return ftWriteFile(t, dir, "ten.txt", ten.String()) }, map[string]any{"offset": 50}},
		{"limit_to_end", func() string { return ftWriteFile(t, dir, "ten.txt", ten.String()) }, map[string]any{"offset": 9, "limit": 100}},
		{"long_line", func() string {
			return ftWriteFile(t, dir, "long.txt", "short\n"+strings.Repeat("é", 2000)+strings.Repeat("x", 500)+"\nend\n")
		}, nil},
		{"offset_near_end", func() string { return ftWriteFile(t, dir, "many.txt", many.String()) }, map[string]any{"offset": 1990}},
		{"relative_path", func() string { return "notes/a.txt" }, nil},
		{"missing", func() string { return filepath.Join(dir, "nope.txt") }, nil},
		{"directory", func() string { return dir }, nil},
		{"binary_extension", func() string { return ftWriteFile(t, dir, "a.zip", "PK\x03\x04") }, nil},
		{"binary_content", func() string { return ftWriteFile(t, dir, "blob.dat", "abc\x00def") }, nil},
		{"pages_not_pdf", func() string { return ftWriteFile(t, dir, "p.txt", "x") }, map[string]any{"pages": "1-2"}},
		{"symlink", func() string {
			target := ftWriteFile(t, dir, "target.txt", "through a link\n")
			link := filepath.Join(dir, "link.txt")
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			return link
		}, nil},
		{"fifo", func() string {
			p := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("mkfifo:", err)
			}
			return p
		}, nil},
		{"notebook", func() string {
			return ftWriteFile(t, dir, "nb.ipynb", `{
 "cells": [
  {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "Some text"]},
  {"cell_type": "code", "execution_count": 2, "metadata": {}, "source": "print(1+1)",
   "outputs": [{"output_type": "stream", "name": "stdout", "text": ["2\n"]},
               {"output_type": "execute_result", "execution_count": 2, "data": {"text/plain": ["'done'"]}, "metadata": {}}]},
  {"cell_type": "code", "execution_count": 3, "metadata": {}, "source": "1/0",
   "outputs": [{"output_type": "error", "ename": "ZeroDivisionError", "evalue": "division by zero", "traceback": ["\u001b[0;31mZeroDivisionError\u001b[0m: division by zero"]}]}
 ],
 "metadata": {"language_info": {"name": "python"}},
 "nbformat": 4, "nbformat_minor": 4
}`)
		}, nil},
		{"notebook_invalid", func() string { return ftWriteFile(t, dir, "broken.ipynb", "{not json") }, nil},
		{"pdf_bad_pages", func() string { return ftWriteFile(t, dir, "doc.pdf", ftMinimalPDF) }, map[string]any{"pages": "5-2"}},
		{"pdf_not_pdf", func() string { return ftWriteFile(t, dir, "fake.pdf", "hello") }, nil},
		{"image_empty", func() string { return ftWriteFile(t, dir, "empty.png", "") }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := map[string]any{"file_path": tc.setup()}
			for k, v := range tc.input {
				in[k] = v
			}
			r := ftRun(t, Read(), ftEnv(dir), in)
			ftCheckGolden(t, "read", tc.name, r, dir)
		})
	}
}

func TestReadImage(t *testing.T) {
	dir := ftTempDir(t)
	small := ftPNG(t, 3, 2)
	p := ftWriteFile(t, dir, "small.png", string(small))
	r := ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p})
	if r.IsError || len(r.Content) != 1 || r.Content[0].Type != model.TypeImage {
		t.Fatalf("Read(png) = %+v", r)
	}
	src := r.Content[0].Source
	if src.Type != "base64" || src.MediaType != "image/png" || src.Data != base64.StdEncoding.EncodeToString(small) {
		t.Errorf("image source = %+v", src)
	}
	want := ReadImageResult{Type: "image", File: ReadImageFile{
		Base64: src.Data, Type: "image/png", OriginalSize: int64(len(small)),
		Dimensions: &ReadImageDimensions{3, 2, 3, 2},
	}}
	if diff := cmp.Diff(want, r.Structured); diff != "" {
		t.Errorf("tool_use_result (-want +got):\n%s", diff)
	}

	// A PNG under a .jpg name is sent as what it is.
	p = ftWriteFile(t, dir, "really.jpg", string(small))
	r = ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p})
	if r.IsError || r.Content[0].Source.MediaType != "image/png" {
		t.Errorf("mislabelled image: %+v", r.Content)
	}

	// A wide image is scaled to fit 2000 pixels.
	big := ftPNG(t, 3000, 40)
	p = ftWriteFile(t, dir, "wide.png", string(big))
	r = ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p})
	if r.IsError {
		t.Fatalf("Read(wide png): %s", ftText(r))
	}
	dims := r.Structured.(ReadImageResult).File.Dimensions
	if *dims != (ReadImageDimensions{3000, 40, 2000, 26}) {
		t.Errorf("dimensions = %+v", *dims)
	}
	data, _ := base64.StdEncoding.DecodeString(r.Content[0].Source.Data)
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width != 2000 || cfg.Height != 26 {
		t.Errorf("scaled image: %v %dx%d", err, cfg.Width, cfg.Height)
	}

	// WebP sizes come from the header.
	webp := []byte("RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f")
	bits := uint32(99) | uint32(49)<<14 // 100×50
	webp = append(webp, byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24), 0, 0, 0, 0, 0)
	p = ftWriteFile(t, dir, "pic.webp", string(webp))
	r = ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p})
	if r.IsError {
		t.Fatalf("Read(webp): %s", ftText(r))
	}
	if d := r.Structured.(ReadImageResult).File.Dimensions; d == nil || d.OriginalWidth != 100 || d.OriginalHeight != 50 {
		t.Errorf("webp dimensions = %+v", d)
	}
}

func ftPNG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.NRGBA{uint8(x), uint8(y), uint8(x * y), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const ftMinimalPDF = "%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n" +
	"2 0 obj << /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >> endobj\n" +
	"3 0 obj << /Type /Page /Parent 2 0 R >> endobj\n4 0 obj << /Type /Page /Parent 2 0 R >> endobj\n" +
	"trailer << /Root 1 0 R >>\n%%EOF\n"

func TestReadPDF(t *testing.T) {
	dir := ftTempDir(t)
	p := ftWriteFile(t, dir, "doc.pdf", ftMinimalPDF)
	r := ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p})
	if r.IsError || len(r.Content) != 1 || r.Content[0].Type != model.TypeDocument {
		t.Fatalf("Read(pdf) = %+v", r)
	}
	enc := base64.StdEncoding.EncodeToString([]byte(ftMinimalPDF))
	if s := r.Content[0].Source; s.MediaType != "application/pdf" || s.Data != enc {
		t.Errorf("document source = %+v", s)
	}
	want := ReadPDFResult{Type: "pdf", File: ReadPDFFile{FilePath: p, Base64: enc, OriginalSize: int64(len(ftMinimalPDF))}}
	if diff := cmp.Diff(want, r.Structured); diff != "" {
		t.Errorf("tool_use_result (-want +got):\n%s", diff)
	}

	r = ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p, "pages": "2"})
	if r.IsError || len(r.Content) != 2 || !strings.Contains(r.Content[0].Text, "(2 pages)") {
		t.Errorf("Read(pdf, pages) = %+v", r.Content)
	}

	// Too many pages: refused with the count.
	var big strings.Builder
	big.WriteString("%PDF-1.7\n2 0 obj << /Type /Pages /Count 250 /Kids [] >> endobj\n")
	p = ftWriteFile(t, dir, "big.pdf", big.String())
	r = ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p})
	if !r.IsError || !strings.Contains(ftText(r), "250 pages") {
		t.Errorf("Read(250-page pdf) = %q", ftText(r))
	}
}

func TestReadPDFPageCount(t *testing.T) {
	for _, tc := range []struct {
		name string
		data string
		want int
	}{
		{"count", ftMinimalPDF, 2},
		{"count_first", "<< /Count 7 /Type /Pages >>", 7},
		{"page_objects", "<< /Type /Page >> << /Type/Page >> << /Type /Pages >>", 2},
		{"unknown", "%PDF-1.4 nothing here", 0},
		{"compressed", "%PDF-1.5\n5 0 obj << /Filter /FlateDecode >> stream\n" + ftDeflate(t, "<< /Type /Pages /Count 12 >>") + "\nendstream\n", 12},
	} {
		if got := pdfPageCount([]byte(tc.data)); got != tc.want {
			t.Errorf("%s: pdfPageCount = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestReadLargeFile(t *testing.T) {
	dir := ftTempDir(t)
	var b strings.Builder
	for b.Len() < 10<<20 {
		fmt.Fprintf(&b, "%08d the quick brown fox jumps over the lazy dog\n", b.Len())
	}
	p := ftWriteFile(t, dir, "big.log", b.String())
	total := strings.Count(b.String(), "\n") + 1

	r := ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p})
	if !r.IsError || !strings.Contains(ftText(r), "offset and limit") || !strings.Contains(ftText(r), "10 MB") {
		t.Errorf("whole read of 10 MB = %q", ftText(r))
	}

	r = ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p, "offset": 100000, "limit": 3})
	if r.IsError {
		t.Fatalf("windowed read: %s", ftText(r))
	}
	lines := strings.Split(ftText(r), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "100000\t") || !strings.HasPrefix(lines[2], "100002\t") {
		t.Errorf("window = %q", lines)
	}
	f := r.Structured.(ReadTextResult).File
	if f.StartLine != 100000 || f.NumLines != 3 || f.TotalLines != total {
		t.Errorf("file = %+v, want start 100000, 3 lines of %d", f, total)
	}

	// A window that is too large is refused unless allow_large is set.
	r = ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p, "offset": 1, "limit": 100000})
	if !r.IsError || !strings.Contains(ftText(r), "limit") {
		t.Errorf("huge window = %q", ftText(r)[:min(200, len(ftText(r)))])
	}
	r = ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p, "offset": 1, "limit": 10000, "allow_large": true})
	if r.IsError || r.Structured.(ReadTextResult).File.NumLines != 10000 {
		t.Errorf("allow_large window failed: error %v", r.IsError)
	}
	r = ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p, "allow_large": true})
	if r.IsError || !strings.Contains(ftText(r), "[Partial view: lines 1-2000 of") {
		t.Errorf("allow_large whole read: error %v", r.IsError)
	}
}

func TestReadUnreadable(t *testing.T) {
	dir := ftTempDir(t)
	var p string
	if os.Geteuid() == 0 {
		// root reads anything chmod allows nothing to; this file fails
		// on read instead.
		p = "/proc/self/mem"
		if _, err := os.Stat(p); err != nil {
			t.Skip("no /proc/self/mem")
		}
	} else {
		p = ftWriteFile(t, dir, "secret.txt", "x")
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	r := ftRun(t, Read(), ftEnv(dir), map[string]any{"file_path": p})
	if !r.IsError || !strings.HasPrefix(ftText(r), "Cannot read "+p+": ") {
		t.Errorf("Read(unreadable) = %q, error %v", ftText(r), r.IsError)
	}
}

func TestReadRecordsFileState(t *testing.T) {
	dir := ftTempDir(t)
	target := ftWriteFile(t, dir, "real.txt", "a\nb\nc\n")
	link := filepath.Join(dir, "alias.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	env := ftEnv(dir)
	ftRun(t, Read(), env, map[string]any{"file_path": link, "limit": 1})
	rec, ok := fileStateOf(env).get(target)
	if !ok || !rec.Partial || rec.Size != 6 {
		t.Fatalf("record after partial read via link = %+v, %v", rec, ok)
	}
	ftRun(t, Read(), env, map[string]any{"file_path": target})
	if rec, _ := fileStateOf(env).get(target); rec.Partial {
		t.Errorf("a full read should clear Partial: %+v", rec)
	}
}

func ftDeflate(t testing.TB, s string) string {
	t.Helper()
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}
