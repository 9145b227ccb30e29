#!/usr/bin/env bash
# Measures the agentloop CLI as the reference CLI was measured: one process
# per run against a scripted Messages API on loopback, reporting wall time,
# CPU time and peak resident memory (from wait4, scripts/rusage.py), for `--version`, a
# one-turn run and runs with extra tool turns; and the binary's size, as
# built and stripped of its symbol and debug tables (-ldflags='-s -w').
#
#   scripts/bench-cli.sh [runs]
#
# BIN=path measures that binary instead of building one (for a before and
# after in the same run: build the two, then run the script on each in
# turn).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-20}"
work="$(mktemp -d)"
trap 'kill $(cat "$work/pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
# The static build README.md recommends (CGO_ENABLED=0); set CGO_ENABLED=1
# to measure the binary linked against the C library.
if [ -n "${BIN:-}" ]; then
  cp "$BIN" "$work/agentloop"
else
  CGO_ENABLED="${CGO_ENABLED:-0}" go build -o "$work/agentloop" "$root/cmd/agentloop"
  CGO_ENABLED="${CGO_ENABLED:-0}" go build -ldflags='-s -w' -o "$work/agentloop-stripped" "$root/cmd/agentloop"
  printf 'binary: %.1f MB as built, %.1f MB stripped\n\n' "$(echo "$(stat -c %s "$work/agentloop") / 1000000" | bc -l)" \
    "$(echo "$(stat -c %s "$work/agentloop-stripped") / 1000000" | bc -l)"
fi
go build -o "$work/fakeserver" "$root/scripts/fakeserver"

version() {
  "$root/scripts/rusage.py" "--version" "$runs" "$work/agentloop" --version
}

measure() { # name turns
  local name=$1 turns=$2
  "$work/fakeserver" -turns "$turns" -addr-file "$work/addr" & echo $! > "$work/pid"
  for _ in $(seq 50); do [ -s "$work/addr" ] && break; sleep 0.1; done
  local url; url="http://$(cat "$work/addr")"
  (cd "$work" && ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-test \
    "$root/scripts/rusage.py" "$name" "$runs" "$work/agentloop" -p "go" --output-format json --tools Bash)
  kill "$(cat "$work/pid")"; rm -f "$work/addr"
}
echo "| run | wall ms (mean) | CPU ms (mean) | CPU ms (median) | peak RSS MiB (max) |"
echo "|---|---|---|---|---|"
version
measure "one turn" 0
measure "10 tool turns" 10
