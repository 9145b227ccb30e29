#!/usr/bin/env bash
# Measures the agentloop CLI as the reference CLI was measured: one process
# per run against a scripted Messages API on loopback, reporting wall time,
# CPU time and peak resident memory (from GNU time), for a one-turn run and
# for runs with extra tool turns.
#
#   scripts/bench-cli.sh [runs]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-20}"
if [ ! -x /usr/bin/time ]; then
  echo "needs GNU time: apt-get install -y time" >&2; exit 1
fi
work="$(mktemp -d)"
trap 'kill $(cat "$work/pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
# The static build README.md recommends (CGO_ENABLED=0); set CGO_ENABLED=1
# to measure the binary linked against the C library.
CGO_ENABLED="${CGO_ENABLED:-0}" go build -o "$work/agentloop" "$root/cmd/agentloop"
go build -o "$work/fakeserver" "$root/scripts/fakeserver"

measure() { # name turns
  local name=$1 turns=$2
  "$work/fakeserver" -turns "$turns" -addr-file "$work/addr" & echo $! > "$work/pid"
  for _ in $(seq 50); do [ -s "$work/addr" ] && break; sleep 0.1; done
  local url; url="http://$(cat "$work/addr")"
  : > "$work/times"
  for _ in $(seq "$runs"); do
    (cd "$work" && ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-test /usr/bin/time -f "%e %U %S %M" -a -o "$work/times" \
      "$work/agentloop" -p "go" --output-format json --tools Bash >/dev/null)
  done
  kill "$(cat "$work/pid")"; rm -f "$work/addr"
  awk -v n="$name" '{w+=$1; c+=$2+$3; if ($4>m) m=$4} END {printf "| %s | %.1f | %.1f | %.1f |\n", n, w/NR*1000, c/NR*1000, m/1024}' "$work/times"
}
echo "| run | wall ms (mean) | CPU ms (mean) | peak RSS MiB (max) |"
echo "|---|---|---|---|"
measure "one turn" 0
measure "10 tool turns" 10
