#!/usr/bin/env bash
# Lists what the CLI's start-up costs per module: the package initialisers
# that run before main (GODEBUG=inittrace=1 of `agentloop --version`),
# added up by module (the standard library as "std"), most allocations
# first. Every run of the CLI pays them, whatever it does.
#
#   scripts/bench-init.sh [binary]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ -z "$bin" ]; then
  bin="$work/agentloop"
  CGO_ENABLED="${CGO_ENABLED:-0}" go build -o "$bin" "$root/cmd/agentloop"
fi
GODEBUG=inittrace=1 "$bin" --version 2>"$work/trace" >/dev/null
# init <package> @<t> ms, <t> ms clock, <n> bytes, <n> allocs
awk '
  $1 == "init" {
    n = split($2, p, "/")
    if (p[1] !~ /\./) m = "std"
    else if (p[1] ~ /^(github\.com|golang\.org|go\.opentelemetry\.io|google\.golang\.org|cloud\.google\.com|go\.uber\.org|gopkg\.in)$/) m = p[1] "/" p[2] "/" p[3]
    else m = p[1] "/" p[2]
    if ($2 ~ /^github\.com\/aws\/aws-sdk-go-v2\/service\//) m = "github.com/aws/aws-sdk-go-v2/service/" p[5]
    inits[m]++; ms[m] += $5; bytes[m] += $8; allocs[m] += $10
    ti++; tms += $5; tb += $8; ta += $10
  }
  END {
    for (m in inits) printf "| %s | %d | %.3f | %d | %d |\n", m, inits[m], ms[m], bytes[m], allocs[m]
    printf "| **total** | %d | %.3f | %d | %d |\n", ti, tms, tb, ta > "/dev/stderr"
  }' "$work/trace" 2>"$work/total" | sort -t'|' -k6 -rn > "$work/rows"
echo "| module | initialisers | ms (clock) | bytes | allocs |"
echo "|---|---|---|---|---|"
cat "$work/rows" "$work/total"
