#!/usr/bin/env bash
# Runs the Go interop suite: builds agentloop and the scripted API, points
# this module's requires at source trees of the community Go wrappers
# (severity1/claude-agent-sdk-go, Roasbeef/claude-agent-sdk-go) with a
# generated go.mod outside the repository, runs `go test` here and ends
# with a line "N passed, N failed".
#
# The wrappers are not on the module proxy and are not fetched here: they
# are read from $AGENTLOOP_INTEROP_SOURCES (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/agentloop-interop), as the trees
# severity1+claude-agent-sdk-go/ and Roasbeef+claude-agent-sdk-go/
# (docs/interop.md says at which commits). Their own dependencies come from
# the module proxy. Without the trees the suite prints "skipped: ..." and
# exits 0.
#
# Exit status: 0 when every test passed (or skipped), 1 when some failed,
# 2 when the harness itself is broken (no go, a build failed, no summary).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export PATH="$PATH:/usr/local/go/bin"

broken() { echo "interop harness broken: $*" >&2; echo "0 passed, 0 failed"; exit 2; }

src="${AGENTLOOP_INTEROP_SOURCES:-${XDG_CACHE_HOME:-$HOME/.cache}/agentloop-interop}"
declare -A mods=(
  [github.com/severity1/claude-agent-sdk-go]=severity1+claude-agent-sdk-go
  [github.com/roasbeef/claude-agent-sdk-go]=Roasbeef+claude-agent-sdk-go
)
for m in "${!mods[@]}"; do
  if [ ! -f "$src/${mods[$m]}/go.mod" ]; then
    echo "skipped: $src/${mods[$m]} not found; see docs/interop.md"
    exit 0
  fi
done
command -v go >/dev/null || broken "go not found"

scratch="$(mktemp -d "${TMPDIR:-/tmp}/agentloop-interop-go.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
bin="${INTEROP_BIN_DIR:-$scratch/bin}"
mkdir -p "$bin" "$scratch/path" "$scratch/mod"
(cd "$repo" && go build -o "$bin/agentloop" ./cmd/agentloop) || broken "go build ./cmd/agentloop failed"
(cd "$repo" && go build -o "$bin/scriptedapi" ./interop/scriptedapi) || broken "go build ./interop/scriptedapi failed"

# The committed go.mod with replace directives to the trees, and its go.sum
# beside it, both in the scratch directory (go's -modfile).
cp "$here/go.mod" "$scratch/mod/go.mod"
[ -f "$here/go.sum" ] && cp "$here/go.sum" "$scratch/mod/go.sum"
for m in "${!mods[@]}"; do
  (cd "$here" && go mod edit -modfile="$scratch/mod/go.mod" -replace="$m=$src/${mods[$m]}") || broken "go mod edit failed"
done
(cd "$here" && go mod tidy -modfile="$scratch/mod/go.mod" >&2) || broken "go mod tidy failed (the wrappers' dependencies come from the module proxy)"

export AGENTLOOP_BIN="${AGENTLOOP_BIN:-$bin/agentloop}" SCRIPTEDAPI_BIN="$bin/scriptedapi"
# severity1 looks the engine up as "claude" on PATH.
ln -sf "$AGENTLOOP_BIN" "$scratch/path/claude"
out="$scratch/out.json"
(cd "$here" && PATH="$scratch/path:$PATH" go test -modfile="$scratch/mod/go.mod" -count=1 -p 1 -json "${@:-./...}") >"$out" 2>"$scratch/err"
rc=$?
# One line per top-level test: ok / not ok, package and name.
grep -E '"Action":"(pass|fail)"' "$out" | grep -E '"Test":"[^"/]+"' |
  sed -E 's/.*"Action":"(pass|fail)","Package":"[^"]*\/([^"/]+)","Test":"([^"]+)".*/\1 \2.\3/; s/^pass /  ok - /; s/^fail /  not ok - /'
pass=$(grep -E '"Action":"pass"' "$out" | grep -E '"Test":"[^"/]+"' | wc -l)
fail=$(grep -E '"Action":"fail"' "$out" | grep -E '"Test":"[^"/]+"' | wc -l)
if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
  tail -40 "$scratch/err" >&2
  grep -E '"Output"' "$out" | tail -20 >&2
  broken "go test exited $rc without a failed test (a build error?)"
fi
if [ "$fail" -ne 0 ] || [ -n "${INTEROP_VERBOSE:-}" ]; then
  grep -E '"Action":"output"' "$out" | grep -E '_test.go:[0-9]+:' | sed -E 's/.*"Output":"(.*)"}$/\1/; s/\\n$//; s/\\t/  /g' | head -60 >&2
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] || exit 1
exit 0
