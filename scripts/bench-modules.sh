#!/usr/bin/env bash
# Counts the modules a new user's machine downloads: each build runs with an
# empty module cache (a temporary GOMODCACHE and GOPATH), GOFLAGS=-mod=mod and
# this machine's GOPROXY, and the script counts the module zips the go
# command fetched (go.mod files alone, which module graph pruning still
# needs for the rest of the graph, are counted apart). The build cache is the
# machine's (it does not change what is downloaded); FRESH_BUILD=1 uses an
# empty one too, so that the seconds are a new user's.
#
#   scripts/bench-modules.sh
#
# Builds measured:
#   cmd      go run ./cmd/agentloop --version, in a copy of this checkout
#   library  a program of one package that imports only the root package
#            (github.com/agentloop/agentloop, replaced by this checkout)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
proxy="$(go env GOPROXY)"
sumdb="$(go env GOSUMDB)"
work="$(mktemp -d)"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT

count() { # name dir args...
  local name=$1 dir=$2; shift 2
  local cache="$work/$name-cache"
  local start end
  start=$(date +%s.%N)
  local gocache; gocache="$(go env GOCACHE)"
  [ -n "${FRESH_BUILD:-}" ] && gocache="$cache/build"
  (cd "$dir" && env GOMODCACHE="$cache/mod" GOPATH="$cache/path" GOCACHE="$gocache" \
    GOFLAGS="-mod=mod -buildvcs=false" GOPROXY="$proxy" GOSUMDB="$sumdb" GOTOOLCHAIN=local \
    go "$@" >"$work/$name.out" 2>&1) || { cat "$work/$name.out" >&2; return 1; }
  end=$(date +%s.%N)
  local zips mods
  zips=$(find "$cache/mod/cache/download" -name '*.zip' | wc -l)
  mods=$(find "$cache/mod/cache/download" -name '*.mod' | wc -l)
  printf '| %s | %d | %d | %.0f |\n' "$name" "$zips" "$mods" "$(echo "$end - $start" | bc)"
  if [ -n "${VERBOSE:-}" ]; then
    find "$cache/mod/cache/download" -name '*.zip' | sed "s|$cache/mod/cache/download/||; s|/@v/| |; s|\.zip$||" | sort >&2
  fi
}

# The command: a copy of the checkout's tracked files, so the module cache of
# the checkout itself is not touched.
mkdir -p "$work/src"
git -C "$root" ls-files -z | (cd "$root" && xargs -0 cp --parents -t "$work/src")
# The library: a fresh module with one file.
mkdir -p "$work/lib"
cat >"$work/lib/main.go" <<'GO'
package main

import (
	"fmt"

	"github.com/agentloop/agentloop"
)

func main() { fmt.Println(agentloop.Version) }
GO
cat >"$work/lib/go.mod" <<GO
module example.com/lib

go $(go env GOVERSION | sed 's/^go//')

require github.com/agentloop/agentloop v0.0.0

replace github.com/agentloop/agentloop => $work/src
GO

echo "| build | module zips | go.mod files | seconds |"
echo "|---|---|---|---|"
count cmd "$work/src" run ./cmd/agentloop --version
count library "$work/lib" run .
