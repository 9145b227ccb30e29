package agentloop

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"regexp"
	"strings"
	"testing"
)

// goFileName is a Go source file's name, as a doc comment would name one.
var goFileName = regexp.MustCompile(`\b[\w/]+\.go\b`)

// TestGodocNamesNoFile: the documentation of the public API (the root
// package's exported types, their fields and methods, and its functions)
// names no source file: a reader of the godoc cannot open one, and files
// move.
func TestGodocNamesNoFile(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	p, err := doc.NewFromFiles(fset, filesOf(pkgs["agentloop"]), "github.com/agentloop/agentloop")
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, text string) {
		if m := goFileName.FindString(text); m != "" {
			t.Errorf("the doc of %s names the file %s", what, m)
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			name := f.Name
			if f.Recv != "" {
				name = f.Recv + "." + name
			}
			check(name, f.Doc)
		}
	}
	funcs(p.Funcs)
	for _, ty := range p.Types {
		check(ty.Name, ty.Doc)
		funcs(ty.Funcs)
		funcs(ty.Methods)
		for _, spec := range ty.Decl.Specs {
			st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType)
			if !ok {
				continue
			}
			for _, f := range st.Fields.List {
				for _, n := range f.Names {
					if n.IsExported() {
						check(ty.Name+"."+n.Name, f.Doc.Text())
					}
				}
			}
		}
	}
}

func filesOf(p *ast.Package) []*ast.File {
	var out []*ast.File
	for _, f := range p.Files {
		out = append(out, f)
	}
	return out
}
