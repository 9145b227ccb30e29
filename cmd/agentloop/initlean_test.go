package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// maxInitAllocs bounds the allocations agentloop's own packages make when
// the process starts (package-level variables and init functions), before
// main runs. Every run of the CLI pays them, most of which need none of
// it: tables and regular expressions are built when first used instead
// (internal/lazy), or are static data. The packages made 2,768
// allocations (307 KB) before that, 737 before the last tables went, and
// none now. The test still counts 236: those of this package's test
// files, which the test binary initialises as part of package main.
const maxInitAllocs = 260

// maxDepInitAllocs bounds the same for the packages of the command's
// dependencies (every module but agentloop and the standard library).
// With the official SDK's client and the AWS SDK's configuration stack
// (the endpoint tables of its STS, SSO and Sign-In clients) they made
// 6,670 allocations at every start; about 1,570 after (JSON Schema, YAML,
// MCP, the stores' drivers, OpenTelemetry), then about 1,440; 1,424 since
// the OTLP exporter writes the protobuf wire format itself.
const maxDepInitAllocs = 1480

// notAtStartup are the import path prefixes of packages that must not
// initialise at all in the command: what only a feature that is off
// would use, or what was replaced by smaller code.
var notAtStartup = []string{
	"github.com/anthropics/anthropic-sdk-go",    // the provider posts with net/http
	"github.com/aws/aws-sdk-go-v2/config",       // Bedrock's credentials: awscreds.go
	"github.com/aws/aws-sdk-go-v2/service/",     // STS, SSO, Sign-In clients
	"github.com/aws/aws-sdk-go-v2/credentials/", // their credential providers
	"github.com/aws/aws-sdk-go-v2/feature/",     // the instance metadata client
	"google.golang.org/grpc",                    // OTLP goes over HTTP
	"google.golang.org/api",                     // Vertex needs golang.org/x/oauth2 only
	"go.opentelemetry.io/proto/otlp",            // the exporter writes protobuf by hand
	"github.com/grpc-ecosystem/grpc-gateway",    // ditto
	"google.golang.org/protobuf",                // the exporter writes the wire format itself (otlp/pbwire.go)
}

// pkgInit is one line of the runtime's init trace.
type pkgInit struct {
	name   string
	allocs int
}

// TestStartupInitIsLean runs the command with the runtime's init trace and
// adds up the allocations of agentloop's packages, and apart those of its
// dependencies' (the test binary also links what only the tests import;
// those are left out).
func TestStartupInitIsLean(t *testing.T) {
	inits, trace := versionInitTrace(t)
	linked := commandPackages(t)
	var own, deps []pkgInit
	ownTotal, depTotal := 0, 0
	for _, in := range inits {
		switch {
		case !linked[in.name]:
			// only the test binary links it
		case strings.HasPrefix(in.name, "github.com/agentloop/agentloop"):
			own = append(own, in)
			ownTotal += in.allocs
		case strings.Contains(strings.SplitN(in.name, "/", 2)[0], "."):
			deps = append(deps, in)
			depTotal += in.allocs
		}
	}
	if len(own) == 0 {
		t.Fatalf("no init trace of agentloop's packages in:\n%s", trace)
	}
	if ownTotal > maxInitAllocs {
		t.Errorf("agentloop's packages allocate %d times at start-up, want at most %d; the most: %v", ownTotal, maxInitAllocs, most(own))
	}
	if depTotal > maxDepInitAllocs {
		t.Errorf("the dependencies' packages allocate %d times at start-up, want at most %d; the most: %v", depTotal, maxDepInitAllocs, most(deps))
	}
	for _, in := range inits {
		for _, p := range notAtStartup {
			if linked[in.name] && strings.HasPrefix(in.name, p) {
				t.Errorf("%s initialises at start-up (%d allocations); nothing under %s should be linked", in.name, in.allocs, p)
			}
		}
	}
}

// versionInitTrace runs the command's --version with the runtime's init
// trace and returns the initialisers in the order they ran, and the trace.
func versionInitTrace(t *testing.T) ([]pkgInit, []byte) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "--version")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("--version: %v\n%s", err, stderr.Bytes())
	}
	inits, err := parseInitTrace(stderr.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return inits, stderr.Bytes()
}

// parseInitTrace reads the lines of GODEBUG=inittrace=1:
// init <package> @<t> ms, <t> ms clock, <n> bytes, <n> allocs
func parseInitTrace(trace []byte) ([]pkgInit, error) {
	var inits []pkgInit
	sc := bufio.NewScanner(bytes.NewReader(trace))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 11 || f[0] != "init" || f[10] != "allocs" {
			continue
		}
		var n int
		if _, err := fmt.Sscan(f[9], &n); err != nil {
			return nil, fmt.Errorf("reading %q: %w", sc.Text(), err)
		}
		inits = append(inits, pkgInit{f[1], n})
	}
	return inits, nil
}

// commandPackages returns the import paths of the packages the command
// (not its tests) links, from go list.
func commandPackages(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	m := map[string]bool{}
	for p := range strings.FieldsSeq(string(out)) {
		m[p] = true
	}
	return m
}

// most returns the five of inits that allocate the most.
func most(inits []pkgInit) []pkgInit {
	sort.Slice(inits, func(i, j int) bool { return inits[i].allocs > inits[j].allocs })
	return inits[:min(5, len(inits))]
}

// TestMainStackGrowsFirst checks that internal/mainstack initialises
// before any package that does work at start-up (every initialiser before
// it allocates nothing), so that the main goroutine's stack has grown
// before the deep initialisers run. Renaming the package so that it sorts
// later, or giving it an import that initialises late, turns this red.
func TestMainStackGrowsFirst(t *testing.T) {
	inits, trace := versionInitTrace(t)
	const mainstack = "github.com/agentloop/agentloop/internal/mainstack"
	for i, in := range inits {
		if in.name == mainstack {
			if i > 8 {
				t.Errorf("%s initialises %dth; want it among the first few", mainstack, i+1)
			}
			return
		}
		if in.allocs > 0 {
			t.Errorf("%s initialises before %s and allocates %d times", in.name, mainstack, in.allocs)
		}
	}
	t.Fatalf("no init of %s in the trace:\n%s", mainstack, trace)
}
