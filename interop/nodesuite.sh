#!/usr/bin/env bash
# The harness of the interop suites written for node:test (interop/ts,
# interop/acp): builds agentloop and the scripted API, installs the suite's
# npm packages when SENTINEL (a package of its lock file) is missing or the
# lock file is newer, runs the suite's test/*.test.mjs (or the arguments
# after SENTINEL), and ends with a line "N passed, N failed".
#
#   interop/nodesuite.sh SUITE_DIR SENTINEL [test files…]
#
# Exit status: 0 when every test passed, 1 when some failed, 2 when the
# harness itself is broken (no node/npm/go, npm install or a build failed,
# no test summary).
set -uo pipefail
here="$1"
sentinel="$2"
shift 2
repo="$(cd "$here/../.." && pwd)"
export PATH="$PATH:/usr/local/go/bin"

broken() { echo "interop harness broken: $*" >&2; echo "0 passed, 0 failed"; exit 2; }

command -v node >/dev/null || broken "node not found"
command -v npm >/dev/null || broken "npm not found"
command -v go >/dev/null || broken "go not found"

bin="${INTEROP_BIN_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/agentloop-interop-bin.XXXXXX")}"
mkdir -p "$bin"
(cd "$repo" && go build -o "$bin/agentloop" ./cmd/agentloop) || broken "go build ./cmd/agentloop failed"
(cd "$repo" && go build -o "$bin/scriptedapi" ./interop/scriptedapi) || broken "go build ./interop/scriptedapi failed"

cd "$here"
if [ ! -d "node_modules/$sentinel" ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --omit=optional --no-audit --no-fund >&2 || broken "npm ci --omit=optional failed"
fi

export AGENTLOOP_BIN="$bin/agentloop" SCRIPTEDAPI_BIN="$bin/scriptedapi"
out="$(mktemp "${TMPDIR:-/tmp}/agentloop-interop-out.XXXXXX")"
# Test files run one after another (the engine and API are cheap, but the
# machines this runs on are small); tests inside a file run in order.
node --test --test-reporter=tap --test-concurrency="${INTEROP_CONCURRENCY:-1}" "${@:-test/}" >"$out" 2>&1
tee_rc=$?
if [ -n "${INTEROP_VERBOSE:-}" ]; then cat "$out"; else
  # One line per test: ok / not ok and its name.
  grep -E '^\s*(not )?ok [0-9]+ - ' "$out" | sed -E 's/^\s+/  /'
fi
pass=$(grep -E '^# pass [0-9]+' "$out" | tail -1 | awk '{print $3}')
fail=$(grep -E '^# fail [0-9]+' "$out" | tail -1 | awk '{print $3}')
cancelled=$(grep -E '^# cancelled [0-9]+' "$out" | tail -1 | awk '{print $3}')
if [ -z "$pass" ] || [ -z "$fail" ]; then
  tail -40 "$out" >&2
  rm -f "$out"
  broken "no test summary (node --test exited $tee_rc)"
fi
fail=$((fail + ${cancelled:-0}))
rm -f "$out"
[ -z "${INTEROP_BIN_DIR:-}" ] && rm -rf "$bin"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] || exit 1
exit 0
