package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// maxBinaryBytes bounds the command as built (CGO_ENABLED=0 go build, no
// linker flags) on linux/amd64. It was 46.0 MB before issue 30, 35.2 MB
// after its first round, 28.3 MB since the stores connect through pgconn
// and redigo (docs/benchmarks.md, "Footprint").
const maxBinaryBytes = 30_000_000

// notLinked are functions that only a library caller reaches: the command
// must not link them. pgx's type system (every codec, behind a
// pgxpool.Pool or pgx.Conn) and go-redis's client (whose connection
// set-up keeps every command method of its pipelines) are megabytes.
var notLinked = []string{
	"github.com/jackc/pgx/v5/pgtype.initDefaultMap",
	"github.com/jackc/pgx/v5.connect",
	"github.com/jackc/pgx/v5/pgxpool.NewWithConfig",
	"github.com/redis/go-redis/v9.NewClient",
	"github.com/redis/go-redis/v9.(*Pipeline).Pipelined",
}

// TestFootprintLinks builds the command as the README does and reads its
// symbol table.
func TestFootprintLinks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "agentloop")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	checkFootprint(t, bin)
}

func checkFootprint(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, s := range syms {
		have[s.Name] = true
	}
	for _, name := range notLinked {
		if have[name] {
			t.Errorf("the command links %s", name)
		}
	}
	fi, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" && fi.Size() > maxBinaryBytes {
		t.Errorf("the command is %d bytes as built, want at most %d (scripts/bench-size.sh attributes them)", fi.Size(), maxBinaryBytes)
	}
}

// notImported are modules and packages that only the constructors taking
// a library caller's pgxpool.Pool or go-redis client need: they live in
// sub-packages the command does not import (session/postgres/pgxstore,
// session/redis/goredisstore, serve/pgxtenants), so that a fresh build of
// the command does not download these modules.
var notImported = []string{
	"github.com/jackc/pgx/v5/pgxpool",
	"github.com/jackc/puddle/v2",
	"github.com/redis/go-redis/v9",
	"go.uber.org/atomic",
}

// TestFootprintDeps reads the command's dependency graph: no package of
// notImported (or below it) may be in it.
func TestFootprintDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 100 {
		t.Fatalf("go list -deps listed %d packages: %q", len(pkgs), pkgs)
	}
	for _, p := range pkgs {
		for _, bad := range notImported {
			if p == bad || strings.HasPrefix(p, bad+"/") {
				t.Errorf("the command imports %s", p)
			}
		}
	}
}
