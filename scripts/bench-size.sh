#!/usr/bin/env bash
# Attributes the CLI binary's bytes, and the pages of it that a run makes
# resident (most of its peak RSS), to the modules or packages they belong
# to (scripts/bench-size/main.go says how). Three tables:
#
#   size        the binary as built, by section, then by module: code,
#               type descriptors, function table (.gopclntab), other data
#   --version   what `agentloop --version` had resident when it exited
#   one turn    the same for a one-turn print-mode run against a scripted
#               Messages API on loopback (scripts/fakeserver)
#
#   scripts/bench-size.sh [module|package] [rows]
#
# BIN=path attributes that binary instead of building one; it needs the
# symbol table and DWARF a plain build keeps. The package-to-module list
# comes from this checkout's `go list -deps` of the command.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
by="${1:-module}"
top="${2:-25}"
work="$(mktemp -d)"
trap 'kill $(cat "$work/pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$work"' EXIT
if [ -n "${BIN:-}" ]; then
  cp "$BIN" "$work/agentloop"
else
  CGO_ENABLED="${CGO_ENABLED:-0}" go build -o "$work/agentloop" "$root/cmd/agentloop"
fi
go build -o "$work/bench-size" "$root/scripts/bench-size"
go build -o "$work/fakeserver" "$root/scripts/fakeserver"
(cd "$root" && go list -deps -f '{{.ImportPath}} {{with .Module}}{{.Path}}{{end}}' ./cmd/agentloop) >"$work/mods"
bs() { "$work/bench-size" -by "$by" -mods "$work/mods" -top "$top" "$@"; }

printf '## size: %d bytes\n\n' "$(stat -c %s "$work/agentloop")"
bs size "$work/agentloop"
printf '\n## resident at exit: agentloop --version\n\n'
(cd "$work" && bs run "$work/agentloop" --version)

"$work/fakeserver" -turns 0 -addr-file "$work/addr" & echo $! > "$work/pid"
for _ in $(seq 50); do [ -s "$work/addr" ] && break; sleep 0.1; done
printf '\n## resident at exit: one turn (agentloop -p go --output-format json --tools Bash)\n\n'
(cd "$work" && ANTHROPIC_BASE_URL="http://$(cat "$work/addr")" ANTHROPIC_API_KEY=sk-test \
  bs run "$work/agentloop" -p go --output-format json --tools Bash </dev/null)
