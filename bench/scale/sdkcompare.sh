#!/usr/bin/env bash
# Runs agentloop's in-process sessions and anthropic-sdk-go's tool runner on
# the same workload in one run, alternating, and writes under $OUT (default
# bench/scale/results): sdk.jsonl (one record per run), sdk.png (the chart)
# and sdk.md (the table, with the machine and commit).
#
#   bench/scale/sdkcompare.sh
#
# The workload: N sessions at once, each TURNS Read calls then an answer,
# the scripted API (another process) waiting LATENCY before each reply;
# over HTTP/1.1 and over TLS with HTTP/2. From the environment (defaults in
# brackets):
#   SESSIONS    session counts                        [100 1000]
#   LATENCY     model latency                         [200ms]
#   TURNS       Read calls per session                [5]
#   ROUNDS      times the whole matrix runs           [2]
#   CLIENTS     HTTP clients: "bench" (both libraries on the benchmark's
#               transport, as many connections as sessions) and/or
#               "shipped" (each on the client it makes when given none)
#                                                     [bench shipped]
#   BEFORE_BIN  a scale binary built from an earlier commit of agentloop
#               (same bench/ sources), run beside the others as
#               "inproc-before"; unset: none
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$here/results}"
sessions="${SESSIONS:-100 1000}"
latency="${LATENCY:-200ms}"
turns="${TURNS:-5}"
rounds="${ROUNDS:-2}"
clients="${CLIENTS:-bench shipped}"
ulimit -n "$(ulimit -Hn)"
export IS_SANDBOX=1 # the sessions bypass permissions; agentloop refuses that as root otherwise

bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
(cd "$root/bench" && go build -o "$bin/" ./scale ./scale/server ./scale/chart)
if [ -n "${BEFORE_BIN:-}" ]; then
  mkdir -p "$bin/before"
  cp "$BEFORE_BIN" "$bin/before/scale"
fi

mkdir -p "$out"
results="$out/sdk.jsonl"
: > "$results"
for round in $(seq "$rounds"); do
  for n in $sessions; do
    for proto in "" "-tls"; do
      for client in $clients; do
        common=(-workload read -sessions "$n" -turns "$turns" -latency "$latency" -idle=false -server-bin "$bin/server" $proto)
        [ "$client" = bench ] || common+=(-client "$client")
        "$bin/scale" -mode sdkrunner "${common[@]}" -out "$results"
        "$bin/scale" -mode inproc "${common[@]}" -out "$results"
        if [ -n "${BEFORE_BIN:-}" ] && [ "$client" = bench ]; then
          "$bin/before/scale" -mode inproc "${common[@]}" -out "$results.before"
        fi
      done
    done
  done
done
if [ -n "${BEFORE_BIN:-}" ]; then # mark the earlier build's records
  sed 's/"mode":"inproc"/"mode":"inproc-before"/' "$results.before" >> "$results"
  rm "$results.before"
fi

{
  echo "Made by \`bench/scale/sdkcompare.sh\` on $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" diff --quiet 2>/dev/null || echo ' (with local changes)'),"
  echo "$(go version | cut -d' ' -f3), $(nproc) cores, load average before $(cut -d' ' -f1 /proc/loadavg)."
  echo "Environment: SESSIONS='$sessions' LATENCY=$latency TURNS=$turns ROUNDS=$rounds CLIENTS='$clients'${BEFORE_BIN:+ BEFORE_BIN=set}."
  echo
} > "$out/sdk.md"
"$bin/chart" -in "$results" -out "$out/sdk.png" -table "$out/sdk.body.md"
cat "$out/sdk.body.md" >> "$out/sdk.md"
rm "$out/sdk.body.md"
cat "$out/sdk.md"
