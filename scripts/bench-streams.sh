#!/usr/bin/env bash
# Event streams on a serve replica that holds none of their sessions:
# N streams (one per session) while the holder publishes an event per
# session per second, read by polling (a store that is not a
# session.Watcher) and by the store's notices (MemoryStore's Watch).
# Prints the p99 delay from storing to arrival, store reads per second and
# the replica's CPU per second for both (BenchmarkNonHolderStreams in
# serve/streams_bench_test.go).
#
#   scripts/bench-streams.sh [streams] [count] [memory|postgres]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
streams="${1:-1000}"
count="${2:-3}"
store="${3:-memory}"
cd "$root"
go test -run XXX -bench 'NonHolderStreams' -benchtime 1x -count "$count" ./serve -streams "$streams" -store "$store" 2>&1 |
  grep -E '^(Benchmark|goos|goarch|cpu|PASS|FAIL|ok)'
