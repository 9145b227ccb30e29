#!/usr/bin/env bash
# Runs the Python interop suite: builds agentloop and the scripted API, puts
# the official Python Agent SDK (claude_agent_sdk) and its dependencies on
# PYTHONPATH from source trees, runs every test_*.py with unittest, and ends
# with a line "N passed, N failed".
#
# The sources are not fetched here: they are read from
# $AGENTLOOP_INTEROP_SOURCES (default ${XDG_CACHE_HOME:-$HOME/.cache}/agentloop-interop),
# one <owner>+<name>/ tree per repository (docs/interop.md says which, at
# which commits). Without them the suite prints "skipped: ..." and exits 0.
#
# Exit status: 0 when every test passed (or skipped), 1 when some failed,
# 2 when the harness itself is broken (no python3/go, a build failed, no
# test summary).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export PATH="$PATH:/usr/local/go/bin"

broken() { echo "interop harness broken: $*" >&2; echo "0 passed, 0 failed"; exit 2; }

src="${AGENTLOOP_INTEROP_SOURCES:-${XDG_CACHE_HOME:-$HOME/.cache}/agentloop-interop}"
# The SDK and what it imports (pure-Python packages, used unchanged).
trees=(
  anthropics+claude-agent-sdk-python agronholm+anyio python-trio+sniffio
  modelcontextprotocol+python-sdk encode+httpx encode+httpcore python-hyper+h11
  florimondmanca+httpx-sse encode+starlette sysid+sse-starlette
  pydantic+pydantic-settings Kludex+python-multipart encode+uvicorn theskumar+python-dotenv
)
pp=""
for t in "${trees[@]}"; do
  if [ ! -d "$src/$t" ]; then
    echo "skipped: $src/$t not found; see docs/interop.md"
    exit 0
  fi
  if [ -d "$src/$t/src" ]; then pp="$pp:$src/$t/src"; else pp="$pp:$src/$t"; fi
done

command -v python3 >/dev/null || broken "python3 not found"
command -v go >/dev/null || broken "go not found"
python3 -c 'import pydantic, jsonschema, attrs' 2>/dev/null || broken "python3 lacks pydantic 2, jsonschema or attrs (see docs/interop.md)"

scratch="$(mktemp -d "${TMPDIR:-/tmp}/agentloop-interop-py.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
bin="${INTEROP_BIN_DIR:-$scratch/bin}"
mkdir -p "$bin"
(cd "$repo" && go build -o "$bin/agentloop" ./cmd/agentloop) || broken "go build ./cmd/agentloop failed"
(cd "$repo" && go build -o "$bin/scriptedapi" ./interop/scriptedapi) || broken "go build ./interop/scriptedapi failed"

# mcp asks importlib.metadata for its own version at import time; a source
# tree has no installed metadata, so give it a minimal dist-info of its own.
mcpver="${AGENTLOOP_INTEROP_MCP_VERSION:-1.29.0}"
mkdir -p "$scratch/meta/mcp-$mcpver.dist-info"
printf 'Metadata-Version: 2.1\nName: mcp\nVersion: %s\n' "$mcpver" >"$scratch/meta/mcp-$mcpver.dist-info/METADATA"

export PYTHONPATH="$here:$scratch/meta$pp" PYTHONDONTWRITEBYTECODE=1
export AGENTLOOP_BIN="${AGENTLOOP_BIN:-$bin/agentloop}" SCRIPTEDAPI_BIN="$bin/scriptedapi"
python3 -c 'import claude_agent_sdk' || broken "claude_agent_sdk does not import from $src"

out="$scratch/out"
python3 "$here/runtests.py" "$@" >"$out" 2>"$scratch/err"
rc=$?
if [ -n "${INTEROP_VERBOSE:-}" ]; then cat "$scratch/err" >&2; fi
summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$out" | tail -1)
grep -E '^\s*(not )?ok - ' "$out"
if [ -z "$summary" ] || [ "$rc" -eq 2 ]; then
  tail -40 "$scratch/err" >&2
  broken "no test summary (runtests.py exited $rc)"
fi
[ "$rc" -ne 0 ] && grep -E '^(FAIL|ERROR):|Error:' "$scratch/err" | head -40 >&2
echo "$summary"
[ "$rc" -eq 0 ] || exit 1
exit 0
