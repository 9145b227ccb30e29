#!/usr/bin/env bash
# Durable sessions against the in-process loop: N concurrent sessions of
# five turns each (four Glob calls and an answer), run with agentloop.Query
# (the baseline) and with temporal.Query over two workers on a Temporal
# server started in the benchmark's process, against a scripted Messages
# API on loopback. Prints turns/s, CPU per turn and wall time per turn for
# both (see BenchmarkSessions in temporal/bench_test.go).
#
#   scripts/bench-temporal.sh [sessions] [count]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sessions="${1:-1000}"
count="${2:-3}"
cd "$root/temporal"
export GOTOOLCHAIN=go1.27.3
go test -run XXX -bench 'Sessions' -benchtime 1x -count "$count" -sessions "$sessions" . 2>&1 |
  grep -E '^(Benchmark|goos|goarch|cpu|PASS|FAIL|ok)'
