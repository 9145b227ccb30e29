package settings_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The settings audit (docs/settings-audit.md) has a row for every key of
// the reference's settings file, as scripts/settings-keys lists them in
// testdata/reference-settings-keys.txt. These tests keep the two in step
// and check what the table claims against the code.

const (
	auditKeyList = "testdata/reference-settings-keys.txt"
	auditDoc     = "../docs/settings-audit.md"
)

// auditStatuses are the statuses a row may have.
var auditStatuses = []string{"honoured", "reported", "refused", "n/a"}

// auditRow is one row of the audit table.
type auditRow struct {
	line     int
	key      string
	security bool
	status   string
	how      string
}

// auditKeys reads the generated key list: one key a line, # comments.
func auditKeys(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(auditKeyList)
	if err != nil {
		t.Fatalf("the reference's key list (regenerate with go run ./scripts/settings-keys -o settings/%s): %v", auditKeyList, err)
	}
	var keys []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			keys = append(keys, l)
		}
	}
	if len(keys) == 0 {
		t.Fatalf("%s lists no keys", auditKeyList)
	}
	return keys
}

// splitTableRow splits a markdown table row into its trimmed cells; a
// backslash-escaped pipe stays in its cell. ok is false for a line that
// is not a table row.
func splitTableRow(line string) (cells []string, ok bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") {
		return nil, false
	}
	line = strings.TrimPrefix(line, "|")
	if strings.HasSuffix(line, "|") && !strings.HasSuffix(line, `\|`) {
		line = strings.TrimSuffix(line, "|")
	}
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			b.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(b.String()))
			b.Reset()
		default:
			b.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(b.String())), true
}

// isSeparatorRow reports whether cells are a table's |---|:--:| line.
func isSeparatorRow(cells []string) bool {
	for _, c := range cells {
		if strings.Trim(c, "-: ") != "" || !strings.Contains(c, "-") {
			return false
		}
	}
	return true
}

// auditTable reads the rows of the audit table: the table whose header
// has a Key, a Status and a Security column, in any order.
func auditTable(t *testing.T) []auditRow {
	t.Helper()
	f, err := os.Open(auditDoc)
	if err != nil {
		t.Fatalf("the settings audit: %v", err)
	}
	defer f.Close()
	var rows []auditRow
	col := map[string]int(nil) // column of each header, in the audit table
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		cells, ok := splitTableRow(sc.Text())
		if !ok {
			col = nil // a table ends at the first line that is not a row
			continue
		}
		if col == nil {
			h := map[string]int{}
			for i, c := range cells {
				h[strings.ToLower(strings.Trim(c, "*_ "))] = i
			}
			_, hasKey := h["key"]
			_, hasStatus := h["status"]
			_, hasSec := h["security"]
			if hasKey && hasStatus && hasSec {
				col = h
			}
			continue
		}
		if isSeparatorRow(cells) {
			continue
		}
		cell := func(name string) string {
			if i, ok := col[name]; ok && i < len(cells) {
				return cells[i]
			}
			return ""
		}
		how := ""
		for name, i := range col {
			if strings.HasPrefix(name, "how") && i < len(cells) {
				how = cells[i]
			}
		}
		sec := strings.Trim(cell("security"), "`")
		if sec != "" && sec != "*" {
			t.Errorf("%s:%d: security column %q: want * or nothing", auditDoc, n, sec)
		}
		rows = append(rows, auditRow{line: n, key: strings.Trim(cell("key"), "` "),
			security: sec == "*", status: strings.Trim(cell("status"), "` "), how: how})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s has no table with Key, Security and Status columns", auditDoc)
	}
	return rows
}

// TestAuditTableCoversReferenceKeys checks that the audit has exactly one
// row for each key of the reference's list, and a known status in each.
func TestAuditTableCoversReferenceKeys(t *testing.T) {
	keys := auditKeys(t)
	rows := auditTable(t)
	var got []string
	seen := map[string]int{}
	for _, r := range rows {
		if prev, dup := seen[r.key]; dup {
			t.Errorf("%s:%d: a second row for %q (the first is on line %d)", auditDoc, r.line, r.key, prev)
			continue
		}
		seen[r.key] = r.line
		got = append(got, r.key)
		if !slices.Contains(auditStatuses, r.status) {
			t.Errorf("%s:%d: %s: status %q is not one of %s", auditDoc, r.line, r.key, r.status, strings.Join(auditStatuses, ", "))
		}
		if r.status != "reported" && r.how == "" {
			t.Errorf("%s:%d: %s: a %s row says how or why", auditDoc, r.line, r.key, r.status)
		}
	}
	want := slices.Clone(keys)
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows of %s against the keys of %s (-list +table):\n%s", auditDoc, auditKeyList, diff)
	}
}

// TestAuditHonouredKeysAreModelled checks that each key the audit calls
// honoured is one the code reads: its top-level key is dispatched on by
// the settings parser (a case label or a key list of this package) or is
// in settingsKeysRead (../internal/conversation/diagnostics.go), and each nested key name is a
// case label of this package or a string the root package uses.
func TestAuditHonouredKeysAreModelled(t *testing.T) {
	parsed := settingsPackageKeys(t)
	read := stringsOfVar(t, "../internal/conversation/diagnostics.go", "settingsKeysRead")
	if len(read) == 0 {
		t.Fatal("no settingsKeysRead in ../internal/conversation/diagnostics.go")
	}
	root := rootPackageStrings(t)
	for _, r := range auditTable(t) {
		if r.status != "honoured" {
			continue
		}
		parts := strings.Split(r.key, ".")
		if !parsed[parts[0]] && !slices.Contains(read, parts[0]) {
			t.Errorf("%s:%d: %s is marked honoured, but the settings parser does not dispatch on %q and settingsKeysRead (internal/conversation/diagnostics.go) does not list it",
				auditDoc, r.line, r.key, parts[0])
			continue
		}
		for _, p := range parts[1:] {
			if !parsed[p] && !root[p] {
				t.Errorf("%s:%d: %s is marked honoured, but no code of package settings or agentloop names %q",
					auditDoc, r.line, r.key, p)
				break
			}
		}
	}
}

// TestAuditSecurityKeysNotReportedOnly checks that no key the audit marks
// as security-relevant is only reported: each must be honoured, refused,
// or not applicable.
func TestAuditSecurityKeysNotReportedOnly(t *testing.T) {
	var bad []string
	for _, r := range auditTable(t) {
		if r.security && r.status == "reported" {
			bad = append(bad, r.key)
		}
	}
	if len(bad) > 0 {
		t.Errorf("%s: security-relevant keys that agentloop only reports (honour or refuse them):\n\t%s",
			auditDoc, strings.Join(bad, "\n\t"))
	}
}

// settingsPackageKeys returns the strings this package's code dispatches
// on: the string case labels (literals or string constants) of its
// switches, and the strings of its package-level []string lists.
func settingsPackageKeys(t *testing.T) map[string]bool {
	t.Helper()
	files := parseGoFiles(t, ".")
	consts := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if v, ok := stringLit(vs.Values[i]); ok {
							consts[n.Name] = v
						}
					}
				}
			}
		}
	}
	out := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			cc, ok := n.(*ast.CaseClause)
			if !ok {
				return true
			}
			for _, e := range cc.List {
				if v, ok := stringLit(e); ok {
					out[v] = true
				} else if id, ok := e.(*ast.Ident); ok && consts[id.Name] != "" {
					out[consts[id.Name]] = true
				}
			}
			return true
		})
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, s := range gd.Specs {
				for _, v := range s.(*ast.ValueSpec).Values {
					if cl, ok := v.(*ast.CompositeLit); ok && isStringSlice(cl.Type) {
						for _, e := range cl.Elts {
							if v, ok := stringLit(e); ok {
								out[v] = true
							}
						}
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("found no case labels in package settings")
	}
	return out
}

// rootPackageStrings returns the string literals and the names of the
// json struct tags of the session's code (internal/conversation), which
// reads keys from Settings.Extra, and of the root package.
func rootPackageStrings(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range append(parseGoFiles(t, ".."), parseGoFiles(t, "../internal/conversation")...) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if v, ok := stringLit(n); ok {
					out[v] = true
				}
			case *ast.Field:
				if n.Tag != nil {
					if tag, err := strconv.Unquote(n.Tag.Value); err == nil {
						name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
						out[name] = true
					}
				}
			}
			return true
		})
	}
	return out
}

// stringsOfVar returns the string literals of the package-level variable
// name declared in the Go file path.
func stringsOfVar(t *testing.T, path, name string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if n.Name != name || i >= len(vs.Values) {
					continue
				}
				ast.Inspect(vs.Values[i], func(n ast.Node) bool {
					if v, ok := stringLit(n); ok {
						out = append(out, v)
					}
					return true
				})
			}
		}
	}
	return out
}

// parseGoFiles parses the non-test Go files of dir.
func parseGoFiles(t *testing.T, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

func stringLit(n ast.Node) (string, bool) {
	bl, ok := n.(*ast.BasicLit)
	if !ok || bl.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(bl.Value)
	return v, err == nil
}

// isStringSlice reports whether a composite literal's type is []string.
func isStringSlice(e ast.Expr) bool {
	at, ok := e.(*ast.ArrayType)
	if !ok || at.Len != nil {
		return false
	}
	id, ok := at.Elt.(*ast.Ident)
	return ok && id.Name == "string"
}
