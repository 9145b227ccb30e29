#!/usr/bin/env bash
# Runs agentloop through the conformance kit (recordings of the reference CLI
# against a scripted Messages API) and through the project's own recordings
# under testdata/conformance (same format), and writes the scores to
# docs/conformance.md.
#
#   scripts/conformance.sh                 # every scenario
#   scripts/conformance.sh a_plain_text n_grep t_skill
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

proj="$root/testdata/conformance"
# dir_of NAME: the scenario's folder, in the kit or in the project's own
# recordings (testdata/conformance, same format, recorded the same way).
dir_of() {
  if [ -d "$kit/scenarios/$1" ]; then echo "$kit/scenarios/$1"
  elif [ -d "$proj/$1" ]; then echo "$proj/$1"
  else echo "conformance.sh: no scenario $1" >&2; return 1; fi
}
if [ $# -gt 0 ]; then names=("$@"); else
  names=(); for s in "$kit"/scenarios/*/ "$proj"/*/; do
    [ -d "$s/out" ] && names+=("$(basename "$s")"); done
fi
kitnames=(); projnames=()
for n in "${names[@]}"; do
  d="$(dir_of "$n")"
  case "$d" in "$kit"/*) kitnames+=("$n") ;; *) projnames+=("$n") ;; esac
done
cd "$kit"
for n in "${names[@]}"; do
  echo "== $n" >&2
  timeout 600 python3 run_scenario.py "$(dir_of "$n")" --bin "$work/agentloop" \
    --out "$work/cand/$n" --tmp-root "$work/tmp" >/dev/null 2>"$work/$n.log" || true
done
: > "$work/lines.txt"
if [ ${#kitnames[@]} -gt 0 ]; then
  python3 conform.py --all scenarios "$work/cand" --only "$(IFS=,; echo "${kitnames[*]}")" >> "$work/lines.txt"
fi
if [ ${#projnames[@]} -gt 0 ]; then
  python3 conform.py --all "$proj" "$work/cand" --only "$(IFS=,; echo "${projnames[*]}")" >> "$work/lines.txt"
fi
{
  grep -E '^(PASS|FAIL) ' "$work/lines.txt" | sort -k2,2 || true
  echo "$(grep -c '^PASS ' "$work/lines.txt") passed, $(grep -c '^FAIL ' "$work/lines.txt") failed"
} | tee "$work/scores.txt"

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
