package tools

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/agentloop/agentloop/internal/lazy"
)

// textEncoding is how a text file stores its characters. Edit and Write keep
// the encoding of the file they change.
type textEncoding int

const (
	encUTF8    textEncoding = iota // plain UTF-8 (or bytes that are not valid UTF-8)
	encUTF8BOM                     // UTF-8 with a byte order mark
	encUTF16LE                     // UTF-16 little endian, with a byte order mark
	encUTF16BE                     // UTF-16 big endian, with a byte order mark
)

var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// decodeText splits a file's bytes into its encoding and its text. The text
// of a UTF-8 file is its bytes unchanged (minus a BOM), so that bytes that
// are not valid UTF-8 survive an edit; UTF-16 is converted to UTF-8.
// decodeText takes data: the text may share its bytes, so the caller must
// not change them afterwards.
func decodeText(data []byte) (textEncoding, string) {
	switch {
	case bytes.HasPrefix(data, bomUTF8):
		return encUTF8BOM, sharedString(data[len(bomUTF8):])
	case bytes.HasPrefix(data, bomUTF16LE):
		return encUTF16LE, decodeUTF16(data[2:], binary.LittleEndian)
	case bytes.HasPrefix(data, bomUTF16BE):
		return encUTF16BE, decodeUTF16(data[2:], binary.BigEndian)
	}
	return encUTF8, sharedString(data)
}

// sharedString returns b as a string without copying it. The string
// shares b's bytes, so b must never change after; the callers of
// decodeText hand it buffers nobody else holds (a file just read, or a
// host's answer, which [tool.Host] gives away).
func sharedString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func decodeUTF16(b []byte, order binary.ByteOrder) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = order.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// encodeText is the inverse of decodeText.
func encodeText(enc textEncoding, text string) []byte {
	switch enc {
	case encUTF8BOM:
		if strings.HasPrefix(text, "\uFEFF") {
			return []byte(text)
		}
		return append(append([]byte{}, bomUTF8...), text...)
	case encUTF16LE, encUTF16BE:
		var order binary.AppendByteOrder = binary.LittleEndian
		out := append([]byte{}, bomUTF16LE...)
		if enc == encUTF16BE {
			order = binary.BigEndian
			out = append([]byte{}, bomUTF16BE...)
		}
		text = strings.TrimPrefix(text, "\uFEFF")
		for _, u := range utf16.Encode([]rune(text)) {
			out = order.AppendUint16(out, u)
		}
		return out
	}
	return []byte(text)
}

// isBinaryData reports whether data seems not to be text: a NUL byte in its
// first 8 KB, as git and ripgrep decide. UTF-16 text with a byte order mark
// is text.
func isBinaryData(data []byte) bool {
	if bytes.HasPrefix(data, bomUTF16LE) || bytes.HasPrefix(data, bomUTF16BE) {
		return false
	}
	head := data
	if len(head) > 8<<10 {
		head = head[:8<<10]
	}
	return bytes.IndexByte(head, 0) >= 0
}

// normalizeNewlines turns CRLF line ends into LF, as Read shows files.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r\n") {
		return s
	}
	return strings.ReplaceAll(s, "\r\n", "\n")
}

// toValidUTF8 replaces each byte that is not part of valid UTF-8 with U+FFFD.
func toValidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		b.WriteRune(r) // invalid bytes decode as utf8.RuneError, one per byte
	}
	return b.String()
}

var readBinaryExtsOnce lazy.Value[map[string]bool] // the value of readBinaryExts, built at its first use

// readBinaryExts returns file types Read refuses without looking inside.
// Images, PDFs and notebooks are handled before this list is consulted.
// It is built when first needed, not at start-up by every process.
func readBinaryExts() map[string]bool { return readBinaryExtsOnce.Get(newReadBinaryExts) }

func newReadBinaryExts() map[string]bool {
	exts := map[string]bool{}
	for _, e := range strings.Fields(`
		.exe .dll .so .dylib .o .obj .a .lib .ko .elf .bin .class .jar .war .ear .pyc .pyo .wasm .node
		.zip .tar .gz .tgz .bz2 .xz .zst .lz4 .7z .rar .iso .dmg .img .deb .rpm .apk .ipa .msi .cab
		.mp3 .mp4 .m4a .m4v .mov .avi .mkv .wav .flac .ogg .oga .webm .aac .wma .wmv .flv .mid .midi
		.ico .bmp .tif .tiff .psd .heic .heif .avif .raw .cr2 .nef
		.ttf .otf .woff .woff2 .eot
		.db .sqlite .sqlite3 .mdb .accdb .parquet .avro .orc .pkl .pickle .npy .npz .h5 .hdf5 .pt .pth .onnx .safetensors
		.doc .docx .xls .xlsx .ppt .pptx .odt .ods .odp .pages .numbers .key`) {
		exts[e] = true
	}
	return exts
}
