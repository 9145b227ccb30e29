#!/usr/bin/env bash
# Measures idle Clients (NewClient, no turn) with the default options,
# transcripts on: this program's idle mode creates N of them in a fresh
# process under a descriptor limit and prints, per Client, the growth of
# the resident set (as left after a GC, and once the runtime has given back
# what it freed), of the live heap and of the open descriptors, and the
# files made under the config directory.
#
#   bench/scale/idle.sh              # this tree
#   BASE=<git revision> bench/scale/idle.sh
#
# With BASE the same measuring program is also built against the library
# at that revision (its bench/scale replaced by this tree's) and run in the
# same run, first, so the two lines compare like with like. A run that
# cannot create all N Clients (too many open files) reports the Client that
# failed and its error, and the figures of those before it.
#
# Environment (defaults in brackets):
#   SESSIONS  idle Clients per run        [100000]
#   FDLIMIT   the descriptor limit        [20000]
#   OUT       where results go            [bench/scale/results/idle.jsonl]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
sessions="${SESSIONS:-100000}"
fdlimit="${FDLIMIT:-20000}"
out="${OUT:-$here/results/idle.jsonl}"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$(dirname "$out")"

build() { # name tree
  (cd "$2/bench" && go build -o "$tmp/bin/$1" ./scale)
}

run() { # name revision
  local fixture="$tmp/fixture-$1" cfg="$tmp/config-$1"
  mkdir -p "$fixture" "$cfg"
  # Bypass mode as root needs IS_SANDBOX=1 (the options the inproc mode
  # uses); no request is made, so the server URL is never dialled.
  local line
  line="$(ulimit -n "$fdlimit" && IS_SANDBOX=1 "$tmp/bin/$1" -mode idle -sessions "$sessions" \
    -server http://127.0.0.1:9 -fixture "$fixture" -config-dir "$cfg" -persist=true)"
  printf '{"library":"%s","fd_limit":%s,%s\n' "$2" "$fdlimit" "${line#\{}" | tee -a "$out"
}

if [ -n "${BASE:-}" ]; then
  base_rev="$(git -C "$root" rev-parse --short "$BASE")"
  mkdir -p "$tmp/base"
  git -C "$root" archive "$base_rev" | tar -x -C "$tmp/base"
  rm -rf "$tmp/base/bench/scale"
  cp -r "$here" "$tmp/base/bench/scale"
  build base "$tmp/base"
  run base "$base_rev"
fi
head_rev="$(git -C "$root" rev-parse --short HEAD)"
if [ -n "$(git -C "$root" status --porcelain -- . ':!bench/scale/results')" ]; then
  head_rev="$head_rev+changes"
fi
build head "$root"
run head "$head_rev"
