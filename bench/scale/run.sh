#!/usr/bin/env bash
# Runs the scale benchmark matrix and writes, under $OUT (default
# bench/scale/results): results.jsonl (one record per run), scale.png (the
# chart), table.md (the records as a table, with the machine and commit) and
# run.log (how long each run took, end to end).
#
#   bench/scale/run.sh
#
# The matrix comes from the environment (defaults in brackets):
#   INPROC_SESSIONS   in-process session counts        [100 1000 10000]
#   LATENCIES         model latencies for in-process   [0 200ms 2s]
#   H2C_SESSIONS      in-process session counts over h2c (HTTP/2 without
#                     TLS, few connections, as against the real API) [none]
#   H2C_LATENCY       model latency for the h2c runs   [200ms]
#   MEMLIMIT_SESSIONS in-process session counts run again under a soft
#                     memory limit (-memlimit, as GOMEMLIMIT) [none]
#   MEMLIMIT          that limit in MiB                [170]
#   MEMLIMIT_LATENCY  model latency for those runs     [200ms]
#   PROCS_SESSIONS    agentloop -p session counts      [100 1000]
#   PROCS_LATENCY     model latency for procs runs     [0]
#   REFERENCE_BIN     the reference CLI binary; unset: no reference runs
#   REFERENCE_SESSIONS reference session counts      [10 100] (about 2 CPU-s per session)
#   PARALLEL          processes at once for procs and reference [2 × cores]
#   TURNS             tool turns per session           [5]
#   APPEND=1          add to results.jsonl instead of starting afresh
# An empty list skips that mode, e.g. PROCS_SESSIONS= bench/scale/run.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$here/results}"
inproc_sessions="${INPROC_SESSIONS-100 1000 10000}"
latencies="${LATENCIES-0 200ms 2s}"
h2c_sessions="${H2C_SESSIONS-}"
h2c_latency="${H2C_LATENCY:-200ms}"
memlimit_sessions="${MEMLIMIT_SESSIONS-}"
memlimit="${MEMLIMIT:-170}"
memlimit_latency="${MEMLIMIT_LATENCY:-200ms}"
procs_sessions="${PROCS_SESSIONS-100 1000}"
procs_latency="${PROCS_LATENCY:-0}"
reference_sessions="${REFERENCE_SESSIONS-10 100}"
parallel="${PARALLEL:-$((2 * $(nproc)))}"
turns="${TURNS:-5}"

# 10,000 sessions hold 10,000 connections in each of two processes.
ulimit -n "$(ulimit -Hn)"

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
(cd "$root/bench" && go build -o "$bin/" ./scale ./scale/server ./scale/chart)
(cd "$root" && go build -o "$bin/agentloop" ./cmd/agentloop)

mkdir -p "$out"
results="$out/results.jsonl"
[ "${APPEND:-}" = 1 ] || : > "$results"
: > "$out/run.log"

timed() { # label command...
  local label=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@"
  t1=$(date +%s.%N)
  awk -v l="$label" -v a="$t0" -v b="$t1" 'BEGIN { printf "%-40s %7.1f s\n", l, b - a }' | tee -a "$out/run.log"
}

for lat in $latencies; do
  for n in $inproc_sessions; do
    timed "inproc N=$n latency=$lat" "$bin/scale" -mode inproc -sessions "$n" -turns "$turns" -latency "$lat" -out "$results"
  done
done
for n in $h2c_sessions; do
  timed "inproc h2c N=$n latency=$h2c_latency" "$bin/scale" -mode inproc -h2c -sessions "$n" -turns "$turns" -latency "$h2c_latency" -out "$results"
done
for n in $memlimit_sessions; do
  timed "inproc memlimit=${memlimit}MiB N=$n latency=$memlimit_latency" "$bin/scale" -mode inproc -memlimit "$memlimit" -sessions "$n" -turns "$turns" -latency "$memlimit_latency" -out "$results"
done
for n in $procs_sessions; do
  timed "procs N=$n latency=$procs_latency" "$bin/scale" -mode procs -agentloop-bin "$bin/agentloop" -parallel "$parallel" \
    -sessions "$n" -turns "$turns" -latency "$procs_latency" -out "$results"
done
if [ -n "${REFERENCE_BIN:-}" ]; then
  for n in $reference_sessions; do
    timed "reference N=$n latency=$procs_latency" "$bin/scale" -mode reference -reference-bin "$REFERENCE_BIN" -parallel "$parallel" \
      -sessions "$n" -turns "$turns" -latency "$procs_latency" -out "$results"
  done
fi

{
  echo "Made by \`bench/scale/run.sh\` on $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (with local changes)'),"
  echo "$(go version | cut -d' ' -f3), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)."
  echo "Environment: INPROC_SESSIONS='$inproc_sessions' LATENCIES='$latencies' H2C_SESSIONS='$h2c_sessions' H2C_LATENCY=$h2c_latency MEMLIMIT_SESSIONS='$memlimit_sessions' MEMLIMIT=$memlimit MEMLIMIT_LATENCY=$memlimit_latency PROCS_SESSIONS='$procs_sessions' PROCS_LATENCY=$procs_latency PARALLEL=$parallel TURNS=$turns${REFERENCE_BIN:+ REFERENCE_BIN=$REFERENCE_BIN}."
  echo
} > "$out/table.md"
"$bin/chart" -in "$results" -out "$out/scale.png" -table "$out/table.body.md"
cat "$out/table.body.md" >> "$out/table.md"
rm "$out/table.body.md"
cat "$out/table.md"
