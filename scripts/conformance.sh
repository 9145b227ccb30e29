#!/usr/bin/env bash
# Runs agentloop through the conformance kit (recordings of the reference CLI
# against a scripted Messages API) and writes the scores to
# docs/conformance.md. The scenarios are the kit's (its scenarios/ folder)
# and the project's own recordings in the same format, one folder each under
# testdata/conformance/ (made with the kit's runner, then
# scripts/conformance_elide.py).
#
#   scripts/conformance.sh                 # every scenario
#   scripts/conformance.sh a_plain_text n_grep
#
# KIT points at the kit (default: ../shared/conformance, beside the project).
# The retry scenarios wait through real back-off delays (a few minutes each).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
kit="${KIT:-$root/../shared/conformance}"
kit="$(cd "$kit" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
go build -o "$work/agentloop" "$root/cmd/agentloop"

# dir_of NAME: the folder that holds scenario NAME (the project's first).
dir_of() {
  if [ -d "$root/testdata/conformance/$1" ]; then echo "$root/testdata/conformance/$1"
  else echo "$kit/scenarios/$1"; fi
}
if [ $# -gt 0 ]; then names=("$@"); else
  names=()
  for s in "$kit"/scenarios/*/ "$root"/testdata/conformance/*/; do
    [ -f "$s/scenario.json" ] && names+=("$(basename "$s")")
  done
fi
cd "$kit"
kitnames=(); ownnames=()
for n in "${names[@]}"; do
  d="$(dir_of "$n")"
  echo "== $n" >&2
  timeout 600 python3 run_scenario.py "$d" --bin "$work/agentloop" \
    --out "$work/cand/$n" --tmp-root "$work/tmp" >/dev/null 2>"$work/$n.log" || true
  if [ "$d" = "$kit/scenarios/$n" ]; then kitnames+=("$n"); else ownnames+=("$n"); fi
done
: > "$work/scores.txt"
if [ ${#kitnames[@]} -gt 0 ]; then
  python3 conform.py --all scenarios "$work/cand" --only "$(IFS=,; echo "${kitnames[*]}")" \
    | tee -a "$work/scores.txt" || true
fi
if [ ${#ownnames[@]} -gt 0 ]; then
  echo "-- the project's recordings (testdata/conformance)" | tee -a "$work/scores.txt"
  python3 conform.py --all "$root/testdata/conformance" "$work/cand" --only "$(IFS=,; echo "${ownnames[*]}")" \
    | tee -a "$work/scores.txt" || true
fi

{
  echo "# Conformance scores"
  echo
  echo "agentloop run through the conformance kit (recordings of the reference CLI against a"
  echo "scripted Messages API), scored by the kit's semantic scorer. Regenerate with"
  echo "\`scripts/conformance.sh\` (all scenarios) or \`scripts/conformance.sh NAME…\`."
  echo
  echo "Run on $(date -u +%Y-%m-%d), $(go version | cut -d' ' -f3), scenarios: ${#names[@]}."
  echo
  echo '```'
  cat "$work/scores.txt"
  echo '```'
  # Why a scenario differs is kept by hand in docs/conformance-notes.md.
  if [ -f "$root/docs/conformance-notes.md" ]; then
    echo
    cat "$root/docs/conformance-notes.md"
  fi
} > "$root/docs/conformance.md"
echo "wrote docs/conformance.md" >&2
