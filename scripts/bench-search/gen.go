package main

// gen: the synthetic tree the benchmark searches, the same for a given size on every machine.

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// moduleBytes is about how much one module weighs.
const moduleBytes = 29 << 20

func generate(dir string, target int64) error {
	modules := int((target + moduleBytes - 1) / moduleBytes)
	stamp := fmt.Sprintf("version %s modules %d\n", treeVersion, modules)
	if old, err := os.ReadFile(filepath.Join(dir, stampName)); err == nil && string(old) == stamp {
		fmt.Fprintf(os.Stderr, "%s is up to date\n", dir)
		return nil
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		if _, err := os.Stat(filepath.Join(dir, stampName)); err != nil {
			return fmt.Errorf("%s is not empty and is not a benchmark tree: remove it or choose another directory", dir)
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, ".git", "info"), 0o755); err != nil {
		return err
	}
	g := &gen{root: dir}
	g.write(".git/HEAD", []byte("ref: refs/heads/main\n"))
	g.write(".gitignore", []byte("# build output and dependencies\nbuild/\nnode_modules/\n*.log\n/tmp/\n*.min.js\n"))
	g.write("README.md", mdFile(newRand("README.md"), 6<<10))

	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 2 {
		wg.Go(func() {
			for {
				m := int(next.Add(1) - 1)
				if m >= modules {
					return
				}
				g.module(m)
			}
		})
	}
	wg.Wait()
	if g.err != nil {
		return g.err
	}
	fmt.Fprintf(os.Stderr, "generated %d files, %.2f GB in %s\n", g.files.Load(), float64(g.bytes.Load())/(1<<30), dir)
	return os.WriteFile(filepath.Join(dir, stampName), []byte(stamp), 0o644)
}

type gen struct {
	root  string
	files atomic.Int64
	bytes atomic.Int64
	mu    sync.Mutex
	err   error
}

func (g *gen) write(rel string, data []byte) {
	abs := filepath.Join(g.root, filepath.FromSlash(rel))
	err := os.MkdirAll(filepath.Dir(abs), 0o755)
	if err == nil {
		err = os.WriteFile(abs, data, 0o644)
	}
	if err != nil {
		g.mu.Lock()
		g.err = err
		g.mu.Unlock()
		return
	}
	g.files.Add(1)
	g.bytes.Add(int64(len(data)))
}

// newRand returns a generator seeded with key.
func newRand(key string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(key))
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

// module writes module m.
func (g *gen) module(m int) {
	r := newRand("module " + strconv.Itoa(m))
	mod := fmt.Sprintf("mod%03d-%s", m, word(r))
	g.write(mod+"/.gitignore", []byte("generated_*.go\n*.tmp\n"))
	g.write(mod+"/go.mod", []byte("module example.com/"+mod+"\n\ngo 1.22\n"))
	for p := range 24 {
		pkg := word(r) + strconv.Itoa(p)
		dir := mod + "/" + pkg
		if p%3 == 1 {
			dir = mod + "/internal/" + word(r) + "/" + pkg
		}
		nfiles := 22 + r.IntN(20)
		for f := range nfiles {
			ext := pick(r, []string{".go", ".go", ".go", ".go", ".py", ".py", ".js", ".js", ".md", ".json"})
			name := fmt.Sprintf("%s/%s_%d%s", dir, word(r), f, ext)
			if ext == ".go" && r.IntN(8) == 0 {
				name = fmt.Sprintf("%s/%s_%d_test.go", dir, word(r), f)
			}
			g.write(name, source(newRand(name), ext, fileSize(r)))
		}
		switch p % 8 {
		case 0: // build output, ignored
			for f := range 4 {
				name := fmt.Sprintf("%s/build/bundle%d.js", dir, f)
				g.write(name, jsFile(newRand(name), 96<<10))
			}
		case 3: // generated code and logs, ignored by the module's .gitignore and the root's
			name := dir + "/generated_" + word(r) + ".go"
			g.write(name, goFile(newRand(name), 64<<10))
			name = dir + "/server.log"
			g.write(name, mdFile(newRand(name), 128<<10))
		case 5: // binary assets
			for f := range 3 {
				name := fmt.Sprintf("%s/assets/img%d.png", dir, f)
				g.write(name, binaryFile(newRand(name), 24<<10+r.IntN(64<<10)))
			}
		case 6: // a hidden cache
			name := dir + "/.cache/" + word(r) + ".go"
			g.write(name, goFile(newRand(name), 32<<10))
		}
	}
	for f := range 2 {
		name := fmt.Sprintf("%s/testdata/fixture%d.json", mod, f)
		g.write(name, jsonFile(newRand(name), 1536<<10))
	}
	name := mod + "/node_modules/lib/index.js"
	g.write(name, jsFile(newRand(name), 512<<10))
	name = mod + "/node_modules/lib/index.min.js"
	g.write(name, jsFile(newRand(name), 256<<10))
}

// fileSize draws a source file's size: mostly a few KB, sometimes much more.
func fileSize(r *rand.Rand) int {
	switch x := r.IntN(100); {
	case x < 65:
		return 2<<10 + r.IntN(14<<10)
	case x < 93:
		return 16<<10 + r.IntN(48<<10)
	default:
		return 64<<10 + r.IntN(256<<10)
	}
}

func source(r *rand.Rand, ext string, size int) []byte {
	switch ext {
	case ".go":
		return goFile(r, size)
	case ".py":
		return pyFile(r, size)
	case ".js":
		return jsFile(r, size)
	case ".md":
		return mdFile(r, size)
	}
	return jsonFile(r, size)
}

var syllables = strings.Fields(`buf conn read write parse node tree item list map key val port host
user auth token cache store load save sync lock queue task job work pool file path dir name size
count index line text byte word char scan lex emit send recv chan time span trace log meta data info
conf opt flag mode state event hook rule match glob walk seek peek push pop head tail next prev first
last min max sum rate limit retry wait done stop start init open close flush reset clear merge split
join trim pad wrap encode decode hash sign verify check valid error fault warn debug frame packet
stream block chunk page row col table field record entry value result status code reply request
session client server handler router route query filter sort group order batch shard region zone`)

func word(r *rand.Rand) string { return syllables[r.IntN(len(syllables))] }

func pick(r *rand.Rand, s []string) string { return s[r.IntN(len(s))] }

func title(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// camel is an identifier of one to three syllables; rarely one with digits
// inside, like Token42Xyz.
func camel(r *rand.Rand, exported bool) string {
	var b strings.Builder
	n := 1 + r.IntN(3)
	for i := range n {
		w := word(r)
		if i > 0 || exported {
			w = title(w)
		}
		b.WriteString(w)
	}
	if r.IntN(20000) == 0 {
		fmt.Fprintf(&b, "%d%s", 10+r.IntN(990), title(word(r)))
	}
	return b.String()
}

func snake(r *rand.Rand) string {
	n := 1 + r.IntN(3)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = word(r)
	}
	return strings.Join(parts, "_")
}

func sentence(r *rand.Rand, words int) string {
	parts := make([]string, words)
	for i := range parts {
		parts[i] = word(r)
	}
	parts[0] = title(parts[0])
	return strings.Join(parts, " ") + "."
}

// planted decides, once per file, which of the searched-for strings it
// holds.
type planted struct {
	eof, deprecated, date bool
}

func plant(r *rand.Rand) planted {
	return planted{eof: r.IntN(90) == 0, deprecated: r.IntN(110) == 0, date: r.IntN(60) == 0}
}

// maybe is true with probability 1/n.
func maybe(r *rand.Rand, n int) bool { return r.IntN(n) == 0 }

func goFile(r *rand.Rand, size int) []byte {
	p := plant(r)
	var b strings.Builder
	b.Grow(size + 1024)
	fmt.Fprintf(&b, "// Copyright 2024 The Example Authors. All rights reserved.\n\n// Package %s %s\npackage %s\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"fmt\"\n\t\"io\"\n)\n\n", word(r), sentence(r, 8), word(r))
	for b.Len() < size {
		typ := camel(r, true)
		fmt.Fprintf(&b, "// %s %s\ntype %s struct {\n", typ, sentence(r, 6+r.IntN(8)), typ)
		for range 2 + r.IntN(5) {
			fmt.Fprintf(&b, "\t%s %s // %s\n", camel(r, false), pick(r, []string{"int", "string", "[]byte", "*" + typ, "map[string]int", "error", "context.Context"}), sentence(r, 4))
		}
		b.WriteString("}\n\n")
		for range 1 + r.IntN(4) {
			name := camel(r, true)
			if maybe(r, 1500) {
				name = "Read" + title(word(r))
			}
			recv := strings.ToLower(typ[:1])
			if p.deprecated && maybe(r, 6) {
				fmt.Fprintf(&b, "// %s %s\n//\n// %s: use %s instead.\n", name, sentence(r, 8), pick(r, []string{"Deprecated", "Deprecated", "DEPRECATED"}), camel(r, true))
			} else {
				fmt.Fprintf(&b, "// %s %s\n", name, sentence(r, 6+r.IntN(10)))
			}
			fmt.Fprintf(&b, "func (%s *%s) %s(ctx context.Context, %s []byte) (int, error) {\n", recv, typ, name, camel(r, false))
			for range 2 + r.IntN(6) {
				v := camel(r, false)
				switch r.IntN(6) {
				case 0:
					fmt.Fprintf(&b, "\tif %s.%s == nil {\n\t\treturn 0, errors.New(%q)\n\t}\n", recv, camel(r, false), strings.ToLower(sentence(r, 4)))
				case 1:
					fmt.Fprintf(&b, "\tfor i := range %s.%s {\n\t\t%s.%s(i, %s)\n\t}\n", recv, camel(r, false), recv, camel(r, true), camel(r, false))
				case 2:
					if p.eof && maybe(r, 4) {
						fmt.Fprintf(&b, "\tif len(%s) < %d {\n\t\treturn 0, io.ErrUnexpectedEOF\n\t}\n", camel(r, false), r.IntN(64))
					} else {
						fmt.Fprintf(&b, "\t%s := fmt.Sprintf(\"%%s: %%d\", %s.%s, %d)\n\t_ = %s\n", v, recv, camel(r, false), r.IntN(1000), v)
					}
				case 3:
					fmt.Fprintf(&b, "\t// %s\n", sentence(r, 5+r.IntN(10)))
				case 4:
					if p.date && maybe(r, 5) {
						fmt.Fprintf(&b, "\t// Changed on %d-%02d-%02d.\n", 2015+r.IntN(10), 1+r.IntN(12), 1+r.IntN(28))
					} else {
						fmt.Fprintf(&b, "\t%s, err := %s.%s(ctx)\n\tif err != nil {\n\t\treturn 0, fmt.Errorf(\"%s: %%w\", err)\n\t}\n\t_ = %s\n", v, recv, camel(r, true), snake(r), v)
					}
				default:
					fmt.Fprintf(&b, "\t%s.%s += len(%s)\n", recv, camel(r, false), camel(r, false))
				}
			}
			b.WriteString("\treturn 0, nil\n}\n\n")
		}
	}
	return []byte(b.String())
}

func pyFile(r *rand.Rand, size int) []byte {
	p := plant(r)
	var b strings.Builder
	b.Grow(size + 1024)
	fmt.Fprintf(&b, "\"\"\"%s\"\"\"\n\nimport os\nimport sys\nfrom typing import Any, Optional\n\n", sentence(r, 10))
	for b.Len() < size {
		cls := camel(r, true)
		fmt.Fprintf(&b, "\nclass %s:\n    \"\"\"%s\"\"\"\n\n    def __init__(self, %s: int = %d) -> None:\n        self.%s = %s\n", cls, sentence(r, 8), snake(r), r.IntN(100), snake(r), snake(r))
		for range 1 + r.IntN(4) {
			fmt.Fprintf(&b, "\n    def %s(self, %s: Optional[str] = None) -> Any:\n", snake(r), snake(r))
			if p.deprecated && maybe(r, 5) {
				fmt.Fprintf(&b, "        warnings.warn(\"%s is deprecated\", DeprecationWarning)\n", snake(r))
			}
			for range 2 + r.IntN(5) {
				switch r.IntN(4) {
				case 0:
					fmt.Fprintf(&b, "        if self.%s is None:\n            raise ValueError(%q)\n", snake(r), strings.ToLower(sentence(r, 4)))
				case 1:
					fmt.Fprintf(&b, "        for %s in self.%s:\n            self.%s(%s)\n", snake(r), snake(r), snake(r), snake(r))
				case 2:
					if p.eof && maybe(r, 4) {
						b.WriteString("        raise EOFError(\"ErrUnexpectedEOF\")\n")
					} else {
						fmt.Fprintf(&b, "        # %s\n", sentence(r, 6+r.IntN(8)))
					}
				default:
					fmt.Fprintf(&b, "        %s = self.%s(%d, %s)\n", snake(r), snake(r), r.IntN(100), snake(r))
				}
			}
			b.WriteString("        return None\n")
		}
	}
	return []byte(b.String())
}

func jsFile(r *rand.Rand, size int) []byte {
	p := plant(r)
	var b strings.Builder
	b.Grow(size + 1024)
	fmt.Fprintf(&b, "'use strict';\n\n/** %s */\nconst %s = require('./%s');\n\n", sentence(r, 9), camel(r, false), word(r))
	for b.Len() < size {
		fmt.Fprintf(&b, "/**\n * %s\n * @param {string} %s\n */\nexport function %s(%s, %s) {\n", sentence(r, 10), camel(r, false), camel(r, false), camel(r, false), camel(r, false))
		if p.deprecated && maybe(r, 5) {
			fmt.Fprintf(&b, "  console.warn('%s is Deprecated');\n", camel(r, false))
		}
		for range 2 + r.IntN(6) {
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&b, "  if (!%s.%s) {\n    throw new Error('%s');\n  }\n", camel(r, false), camel(r, false), strings.ToLower(sentence(r, 4)))
			case 1:
				fmt.Fprintf(&b, "  for (const %s of %s) {\n    %s.push(%s);\n  }\n", camel(r, false), camel(r, false), camel(r, false), camel(r, false))
			case 2:
				if p.eof && maybe(r, 4) {
					b.WriteString("  if (offset > buffer.length) throw new ErrUnexpectedEOF(offset);\n")
				} else {
					fmt.Fprintf(&b, "  // %s\n", sentence(r, 6+r.IntN(8)))
				}
			default:
				fmt.Fprintf(&b, "  const %s = await %s.%s(%d);\n", camel(r, false), camel(r, false), camel(r, false), r.IntN(1000))
			}
		}
		b.WriteString("  return null;\n}\n\n")
	}
	return []byte(b.String())
}

func mdFile(r *rand.Rand, size int) []byte {
	p := plant(r)
	var b strings.Builder
	b.Grow(size + 1024)
	fmt.Fprintf(&b, "# %s\n\n", title(word(r)+" "+word(r)))
	for b.Len() < size {
		fmt.Fprintf(&b, "## %s\n\n", title(snake(r)))
		for range 2 + r.IntN(4) {
			for range 3 + r.IntN(5) {
				b.WriteString(sentence(r, 6+r.IntN(10)))
				b.WriteByte(' ')
			}
			b.WriteString("\n\n")
		}
		if p.date && maybe(r, 3) {
			fmt.Fprintf(&b, "Released %d-%02d-%02d.\n\n", 2015+r.IntN(10), 1+r.IntN(12), 1+r.IntN(28))
		}
		if p.deprecated && maybe(r, 3) {
			b.WriteString("> **Deprecated**: this section describes the old behaviour.\n\n")
		}
		if p.eof && maybe(r, 3) {
			b.WriteString("A short read returns `io.ErrUnexpectedEOF`.\n\n")
		}
		fmt.Fprintf(&b, "```go\n%s, err := %s.%s(ctx)\n```\n\n", camel(r, false), word(r), camel(r, true))
	}
	return []byte(b.String())
}

func jsonFile(r *rand.Rand, size int) []byte {
	p := plant(r)
	var b strings.Builder
	b.Grow(size + 1024)
	b.WriteString("[\n")
	for b.Len() < size {
		rec := map[string]any{
			"id":     r.IntN(1 << 30),
			"name":   snake(r),
			"kind":   word(r),
			"tags":   []string{word(r), word(r)},
			"weight": float64(r.IntN(100000)) / 100,
			"note":   sentence(r, 5+r.IntN(6)),
		}
		if p.date && maybe(r, 20) {
			rec["updated"] = fmt.Sprintf("%d-%02d-%02d", 2015+r.IntN(10), 1+r.IntN(12), 1+r.IntN(28))
		}
		if p.deprecated && maybe(r, 30) {
			rec["status"] = "deprecated"
		}
		line, _ := json.Marshal(rec)
		b.WriteString("  ")
		b.Write(line)
		b.WriteString(",\n")
	}
	b.WriteString("  {}\n]\n")
	return []byte(b.String())
}

// binaryFile is a PNG-like file: a header, NUL bytes early on, and noise
// that holds some of the searched-for strings, which a search must not
// report.
func binaryFile(r *rand.Rand, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	copy(b, "\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")
	for _, s := range []string{"io.ErrUnexpectedEOF", "deprecated", "func (r *T) ReadAll("} {
		at := 16<<10 + r.IntN(size-(16<<10)-64)
		copy(b[at:], s)
	}
	return b
}
