package tools

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image"
	"image/draw"
	_ "image/gif" // decoders for image.Decode
	"image/jpeg"
	"image/png"
	"net/http"
	"os"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// imageMediaType returns the media type of an extension Read shows as an
// image (one of the four the Messages API accepts), "" for another.
func imageMediaType(ext string) string {
	switch ext {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".gif":
		return "image/gif"
	case ".webp":
		return "image/webp"
	}
	return ""
}

// Image limits: the API refuses base64 data over 5 MB, and large images cost
// many tokens for little gain, so bigger ones are scaled down.
const (
	imageMaxBytes  = 5 << 20 * 3 / 4 // raw bytes whose base64 fits in 5 MB
	imageMaxSide   = 2000            // pixels
	imageMaxInput  = 100 << 20       // larger files are refused unread
	imageMaxPixels = 64 << 20        // larger images are not decoded
)

// ReadImageResult is the tool_use_result of a Read of an image.
type ReadImageResult struct {
	Type string        `json:"type"` // "image"
	File ReadImageFile `json:"file"`
}

// ReadImageFile is the image as sent to the model.
type ReadImageFile struct {
	Base64       string               `json:"base64"`
	Type         string               `json:"type"` // media type
	OriginalSize int64                `json:"originalSize"`
	Dimensions   *ReadImageDimensions `json:"dimensions,omitempty"`
}

// ReadImageDimensions gives the size of an image on disk and as sent.
type ReadImageDimensions struct {
	OriginalWidth  int `json:"originalWidth"`
	OriginalHeight int `json:"originalHeight"`
	DisplayWidth   int `json:"displayWidth"`
	DisplayHeight  int `json:"displayHeight"`
}

func readImage(dir *targetDir, path, key, ext string, info os.FileInfo, env *tool.Env) (tool.Result, error) {
	if info.Size() == 0 {
		return tool.Error(fmt.Sprintf("Cannot read %s: the image file is empty.", path)), nil
	}
	if info.Size() > imageMaxInput {
		return tool.Error(fmt.Sprintf("Cannot read %s: the image is %s, too large to load.", path, fileSizeText(info.Size()))), nil
	}
	data, err := dir.read(info.Size())
	if err != nil {
		return tool.Error(fmt.Sprintf("Cannot read %s: %v", path, pathErrCause(err))), nil
	}
	media := imageMediaType(ext)
	if sniffed := http.DetectContentType(data); isImageMedia(sniffed) {
		media = sniffed // a .png that holds a JPEG is sent as what it is
	}
	out, dims, err := fitImage(data, media)
	if err != nil {
		return tool.Error(fmt.Sprintf("Cannot read %s: %v", path, err)), nil
	}
	fileStateOf(env).record(key, info, data, false)
	enc := base64.StdEncoding.EncodeToString(out.data)
	r := tool.Result{Content: []model.Content{{
		Type:   model.TypeImage,
		Source: &model.Source{Type: "base64", MediaType: out.media, Data: enc},
	}}}
	r.Structured = ReadImageResult{Type: "image", File: ReadImageFile{
		Base64: enc, Type: out.media, OriginalSize: info.Size(), Dimensions: dims,
	}}
	return r, nil
}

func isImageMedia(m string) bool {
	switch m {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

type encodedImage struct {
	data  []byte
	media string
}

// fitImage returns the image to send: the file itself when it is small
// enough, otherwise a scaled-down re-encoding.
func fitImage(data []byte, media string) (encodedImage, *ReadImageDimensions, error) {
	w, h, known := imageSize(data, media)
	var dims *ReadImageDimensions
	if known {
		dims = &ReadImageDimensions{OriginalWidth: w, OriginalHeight: h, DisplayWidth: w, DisplayHeight: h}
	}
	if len(data) <= imageMaxBytes && (!known || (w <= imageMaxSide && h <= imageMaxSide)) {
		return encodedImage{data, media}, dims, nil
	}
	if media == "image/webp" {
		return encodedImage{}, nil, fmt.Errorf("the WebP image is too large to send (%s, %dx%d) and cannot be scaled down here; convert it to PNG or JPEG first", fileSizeText(int64(len(data))), w, h)
	}
	if known && int64(w)*int64(h) > imageMaxPixels {
		return encodedImage{}, nil, fmt.Errorf("the image is %dx%d pixels, too large to scale down here", w, h)
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return encodedImage{}, nil, fmt.Errorf("the image is too large to send as is and could not be decoded to scale it down: %v", err)
	}
	b := src.Bounds()
	tw, th := fitWithin(b.Dx(), b.Dy(), imageMaxSide)
	for {
		scaled := scaleImage(src, tw, th)
		out, err := encodeScaled(scaled, media)
		if err != nil {
			return encodedImage{}, nil, err
		}
		if len(out.data) <= imageMaxBytes || tw <= 16 || th <= 16 {
			return out, &ReadImageDimensions{OriginalWidth: b.Dx(), OriginalHeight: b.Dy(), DisplayWidth: tw, DisplayHeight: th}, nil
		}
		tw, th = max(1, tw*3/4), max(1, th*3/4)
	}
}

func fitWithin(w, h, side int) (int, int) {
	if w <= side && h <= side {
		return w, h
	}
	if w >= h {
		return side, max(1, h*side/w)
	}
	return max(1, w*side/h), side
}

// encodeScaled writes PNG for images that may have transparency unless JPEG
// is needed to fit the size limit.
func encodeScaled(img *image.NRGBA, media string) (encodedImage, error) {
	var buf bytes.Buffer
	if media != "image/jpeg" {
		if err := png.Encode(&buf, img); err != nil {
			return encodedImage{}, err
		}
		if buf.Len() <= imageMaxBytes {
			return encodedImage{buf.Bytes(), "image/png"}, nil
		}
		buf.Reset()
	}
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
		return encodedImage{}, err
	}
	return encodedImage{buf.Bytes(), "image/jpeg"}, nil
}

// scaleImage shrinks src to w×h by averaging the source pixels that fall in
// each target pixel (a box filter).
func scaleImage(src image.Image, w, h int) *image.NRGBA {
	b := src.Bounds()
	in, ok := src.(*image.NRGBA)
	if !ok || b.Min != (image.Point{}) {
		in = image.NewNRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(in, in.Bounds(), src, b.Min, draw.Src)
	}
	sw, sh := b.Dx(), b.Dy()
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		y0, y1 := y*sh/h, max((y+1)*sh/h, y*sh/h+1)
		for x := range w {
			x0, x1 := x*sw/w, max((x+1)*sw/w, x*sw/w+1)
			var r, g, bl, a, n uint64
			for sy := y0; sy < y1; sy++ {
				row := in.Pix[sy*in.Stride:]
				for sx := x0; sx < x1; sx++ {
					p := row[sx*4 : sx*4+4]
					r += uint64(p[0])
					g += uint64(p[1])
					bl += uint64(p[2])
					a += uint64(p[3])
					n++
				}
			}
			o := out.Pix[y*out.Stride+x*4:]
			o[0], o[1], o[2], o[3] = uint8(r/n), uint8(g/n), uint8(bl/n), uint8(a/n)
		}
	}
	return out
}

// imageSize reads an image's dimensions from its header.
func imageSize(data []byte, media string) (w, h int, ok bool) {
	if media == "image/webp" {
		return webpSize(data)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}

// webpSize parses the three WebP header forms (lossy VP8, lossless VP8L and
// extended VP8X); the standard library has no WebP decoder.
func webpSize(d []byte) (int, int, bool) {
	if len(d) < 30 || string(d[0:4]) != "RIFF" || string(d[8:12]) != "WEBP" {
		return 0, 0, false
	}
	switch string(d[12:16]) {
	case "VP8 ":
		if d[23] != 0x9d || d[24] != 0x01 || d[25] != 0x2a {
			return 0, 0, false
		}
		w := int(binary.LittleEndian.Uint16(d[26:28]) & 0x3fff)
		h := int(binary.LittleEndian.Uint16(d[28:30]) & 0x3fff)
		return w, h, true
	case "VP8L":
		if d[20] != 0x2f {
			return 0, 0, false
		}
		bits := binary.LittleEndian.Uint32(d[21:25])
		return int(bits&0x3fff) + 1, int(bits>>14&0x3fff) + 1, true
	case "VP8X":
		w := int(d[24]) | int(d[25])<<8 | int(d[26])<<16
		h := int(d[27]) | int(d[28])<<8 | int(d[29])<<16
		return w + 1, h + 1, true
	}
	return 0, 0, false
}
