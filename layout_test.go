package agentloop_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxGoFileBytes is the largest Go file the module keeps: a file over it
// is doing more than one thing and gets split by what it does.
const maxGoFileBytes = 25 << 10

// TestLayoutFileSize holds every Go file of the module (tests included)
// to maxGoFileBytes.
func TestLayoutFileSize(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > maxGoFileBytes {
			t.Errorf("%s is %d bytes, over %d: split it by what it does", path, info.Size(), maxGoFileBytes)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// importOrder is the one direction imports run between the packages that
// make up a session: each may import those after it, never one before it.
// Leaves (internal/diag, internal/vocab, permission, sandbox, …) are
// outside the list and may be imported by any of them.
var importOrder = []string{
	"internal/conversation",
	"internal/subagent",
	"internal/mcphost",
	"internal/lineage",
	"internal/plugin",
	"internal/assemble",
	"internal/authorize",
	"internal/engine",
}

// TestLayoutImportOrder holds the non-test files of the packages of
// importOrder to it, and keeps every internal package off the root
// package.
func TestLayoutImportOrder(t *testing.T) {
	const module = "github.com/agentloop/agentloop"
	rank := map[string]int{}
	for i, p := range importOrder {
		rank[p] = i
	}
	err := filepath.WalkDir("internal", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		for _, imp := range f.Imports {
			target := strings.Trim(imp.Path.Value, `"`)
			if target == module {
				t.Errorf("%s imports the root package", path)
				continue
			}
			rel, ok := strings.CutPrefix(target, module+"/")
			if !ok {
				continue
			}
			from, inFrom := rank[pkg]
			to, inTo := rank[rel]
			if inFrom && inTo && to < from {
				t.Errorf("%s (%s) imports %s, which comes before it in importOrder", path, pkg, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Root package limits: the root is the API (what users type) and the
// wiring to internal/conversation; the machinery lives below it.
const (
	maxRootFiles     = 14
	maxRootTestFiles = 8
)

// TestLayoutRoot holds the root package to its limits, and to the rule
// that no private type there has methods: a private type with methods is
// machinery, which belongs in an internal package.
func TestLayoutRoot(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files, tests int
	for _, name := range entries {
		if strings.HasSuffix(name, "_test.go") {
			tests++
			continue
		}
		files++
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			recv := fd.Recv.List[0].Type
			if s, ok := recv.(*ast.StarExpr); ok {
				recv = s.X
			}
			if id, ok := recv.(*ast.Ident); ok && !id.IsExported() {
				t.Errorf("%s: method %s on private type %s: machinery belongs in an internal package", name, fd.Name.Name, id.Name)
			}
		}
	}
	if files > maxRootFiles {
		t.Errorf("the root package has %d non-test files, over %d", files, maxRootFiles)
	}
	if tests > maxRootTestFiles {
		t.Errorf("the root package has %d test files, over %d", tests, maxRootTestFiles)
	}
}

// maxRootModules bounds the modules whose packages a program importing
// only the root package builds (and so downloads): 45 when the provider
// linked the official SDK's client and the AWS SDK's configuration stack,
// 15 since. Heavy optional features live in packages the root does not
// import (session/postgres, session/redis, otel, model/openai, mcp, acp,
// serve); see README, "Layout".
const maxRootModules = 15

// TestLayoutRootModules lists the modules of the root package's imports
// with go list.
func TestLayoutRootModules(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	mods := map[string]bool{}
	for m := range strings.FieldsSeq(string(out)) {
		if m != "github.com/agentloop/agentloop" {
			mods[m] = true
		}
	}
	if len(mods) > maxRootModules {
		t.Errorf("the root package builds packages of %d modules, want at most %d: %v", len(mods), maxRootModules, slices.Sorted(maps.Keys(mods)))
	}
}
