#!/usr/bin/env bash
# Benchmarks the Grep and Glob tools against ripgrep on two trees, the Go
# toolchain's src and a generated tree of more than 1 GB, and writes the
# results into docs/benchmarks-search.md (between the results markers).
#
#   scripts/bench-search.sh               # both trees
#   scripts/bench-search.sh goroot        # one tree: goroot or gen
#
# Environment:
#   BENCH_SEARCH_TREE  where the generated tree is kept between runs
#                      (default ${TMPDIR:-/tmp}/agentloop-bench-tree)
#   BENCH_SEARCH_MB    its size in MiB (default 1100)
#   BENCH_RUNS         most timed runs per command (default 10, at least 5)
#   BENCH_NO_DOC=1     print the table without touching the doc
#   BENCH_TIMER        loop (default): scripts/bench-search times rg and
#                      Grep in alternation, so that both see the same load;
#                      hyperfine: hyperfine times all runs of rg, then all
#                      of Grep (fine on an otherwise idle machine)
#
# Needs ripgrep (Debian package ripgrep), and hyperfine (package hyperfine)
# with BENCH_TIMER=hyperfine; it installs them with apt-get when it can. It
# is run by hand, not by CI: the numbers depend on the machine, so they are
# only comparable within one run.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tree="${BENCH_SEARCH_TREE:-${TMPDIR:-/tmp}/agentloop-bench-tree}"
size_mb="${BENCH_SEARCH_MB:-1100}"
runs="${BENCH_RUNS:-10}"
if [ "$runs" -lt 5 ]; then runs=5; fi
if [ $# -gt 0 ]; then trees=("$@"); else trees=(goroot gen); fi

timer="${BENCH_TIMER:-loop}"
case "$timer" in
  loop) timer_desc="the driver's interleaved loop (median of up to $runs rounds after 2 warm-up rounds)" ;;
  hyperfine) timer_desc="hyperfine (median of up to $runs runs after 2 warm-ups)" ;;
  *) echo "BENCH_TIMER is loop or hyperfine" >&2; exit 2 ;;
esac

missing=()
command -v rg >/dev/null || missing+=(ripgrep)
if [ "$timer" = hyperfine ]; then command -v hyperfine >/dev/null || missing+=(hyperfine); fi
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  if command -v apt-get >/dev/null && { [ -z "$sudo" ] || command -v sudo >/dev/null; }; then
    echo "installing ${missing[*]} with apt-get" >&2
    $sudo apt-get update -qq && $sudo apt-get install -y -qq "${missing[@]}" >&2 || {
      echo "could not install them: run 'sudo apt-get install -y ${missing[*]}' and try again" >&2
      exit 1
    }
  else
    echo "this benchmark needs ${missing[*]}: install the Debian package(s) with" >&2
    echo "'sudo apt-get install -y ${missing[*]}', or 'cargo install ${missing[*]}'" >&2
    exit 1
  fi
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bin="$work/bench-search"
(cd "$root" && go build -o "$bin" ./scripts/bench-search)

# The cases: name | tool | tool input (JSON) | ripgrep arguments.
# Grep's head_limit is 0 so that it produces all of its results, as rg does.
# rg respects ignore files, skips hidden and binary files and does not follow
# links by default, as Grep does; --no-config and --no-ignore-global keep the
# user's settings out. Glob includes hidden and ignored files (but not .git),
# hence rg's --hidden --no-ignore -g '!.git'. The rg commands do not sort,
# though Grep's files and Glob's paths come newest first: rg's --sort makes
# it single-threaded; the last two cases show what sorting costs it.
lit='ErrUnexpectedEOF'
re='func \\(\\w+ \\*\\w+\\) Read\\w*\\('
re_rg='func \(\w+ \*\w+\) Read\w*\('
nolit='[A-Z][a-z]+[0-9]{2,}[A-Z]'
rgf='--no-config --no-ignore-global'
cases=(
  "literal, files|grep|{\"pattern\":\"$lit\",\"head_limit\":0}|$rgf -l $lit"
  "literal, files, type go|grep|{\"pattern\":\"$lit\",\"type\":\"go\",\"head_limit\":0}|$rgf -l -t go $lit"
  "literal, content|grep|{\"pattern\":\"$lit\",\"output_mode\":\"content\",\"head_limit\":0}|$rgf -n $lit"
  "literal, content, type go|grep|{\"pattern\":\"$lit\",\"output_mode\":\"content\",\"type\":\"go\",\"head_limit\":0}|$rgf -n -t go $lit"
  "literal, count|grep|{\"pattern\":\"$lit\",\"output_mode\":\"count\",\"head_limit\":0}|$rgf -c $lit"
  "regex, files|grep|{\"pattern\":\"$re\",\"head_limit\":0}|$rgf -l '$re_rg'"
  "regex, content|grep|{\"pattern\":\"$re\",\"output_mode\":\"content\",\"head_limit\":0}|$rgf -n '$re_rg'"
  "regex, content, type go|grep|{\"pattern\":\"$re\",\"output_mode\":\"content\",\"type\":\"go\",\"head_limit\":0}|$rgf -n -t go '$re_rg'"
  "case-insensitive, files|grep|{\"pattern\":\"deprecated\",\"-i\":true,\"head_limit\":0}|$rgf -l -i deprecated"
  "case-insensitive, content|grep|{\"pattern\":\"deprecated\",\"-i\":true,\"output_mode\":\"content\",\"head_limit\":0}|$rgf -n -i deprecated"
  "case-insensitive, content, type go|grep|{\"pattern\":\"deprecated\",\"-i\":true,\"output_mode\":\"content\",\"type\":\"go\",\"head_limit\":0}|$rgf -n -i -t go deprecated"
  "regex without a literal, content|grep|{\"pattern\":\"$nolit\",\"output_mode\":\"content\",\"head_limit\":0}|$rgf -n '$nolit'"
  "Glob **/*.go|glob|{\"pattern\":\"**/*.go\"}|$rgf --files --hidden --no-ignore -g '**/*.go' -g '!.git'"
  "literal, files; rg sorted by mtime|grep|{\"pattern\":\"$lit\",\"head_limit\":0}|$rgf -l --sortr modified $lit"
  "Glob **/*.go; rg sorted by mtime|glob|{\"pattern\":\"**/*.go\"}|$rgf --files --hidden --no-ignore -g '**/*.go' -g '!.git' --sortr modified"
)

# count_rg prints how many results an rg command gives: lines, or the sum of
# the counts of -c.
count_rg() {
  local out
  out="$(eval "rg $1" || true)"
  if [[ " $1 " == *" -c "* ]]; then
    printf '%s\n' "$out" | awk -F: 'NF { n += $NF } END { print n + 0 }'
  else
    printf '%s\n' "$out" | awk 'NF { n++ } END { print n + 0 }'
  fi
}

rows="$work/rows.md"
facts="$work/facts.md"
: >"$rows"
: >"$facts"
for t in "${trees[@]}"; do
  case "$t" in
    goroot) dir="$(go env GOROOT)/src"; label="GOROOT/src" ;;
    gen)
      "$bin" gen "$tree" "$size_mb"
      dir="$tree"; label="generated" ;;
    *) echo "unknown tree $t: use goroot or gen" >&2; exit 2 ;;
  esac
  cd "$dir"
  nfiles=$(find . -type f | wc -l)
  bytes=$(du -sb . | cut -f1)
  nsearched=$(rg --no-config --no-ignore-global --files | wc -l)
  printf -- '- %s (`%s`): %d files, %.2f GiB; %d of them searched by Grep (not ignored, not hidden)\n' \
    "$label" "$dir" "$nfiles" "$(awk -v b="$bytes" 'BEGIN { print b / 1073741824 }')" "$nsearched" >>"$facts"
  i=0
  for c in "${cases[@]}"; do
    IFS='|' read -r name kind input rgargs <<<"$c"
    i=$((i + 1))
    printf '%s\n' "$input" >"$work/case$i.json"
    n_rg=$(count_rg "$rgargs")
    n_tool=$("$bin" "$kind" -count . "@$work/case$i.json")
    echo "== $label: $name (results: rg $n_rg, agentloop $n_tool)" >&2
    eval "rgcmd=(rg $rgargs)"
    if [ "$timer" = hyperfine ]; then
      hyperfine -N --style basic --warmup 2 --min-runs 5 --max-runs "$runs" \
        --export-csv "$work/h$i.csv" \
        -n rg "rg $rgargs" -n agentloop "$bin $kind . @$work/case$i.json" >"$work/h$i.log" 2>&1 || {
        cat "$work/h$i.log" >&2
        exit 1
      }
      # median, min and CPU (user + system, mean) of each, as "time" prints them.
      times=$(awk -F, 'NR == 2 { a = $4 "," $7; ac = $5 + $6 } NR == 3 { b = $4 "," $7; bc = $5 + $6 }
        END { print a "," b "," ac "," bc "," 0 }' "$work/h$i.csv")
    else
      times=$("$bin" time -runs "$runs" -min-runs 5 -- "${rgcmd[@]}" --- "$bin" "$kind" . "@$work/case$i.json")
    fi
    echo "$times" | awk -F, -v tree="$label" -v name="$name" -v nrg="$n_rg" -v ntool="$n_tool" '{
        ratio = $3 / $1
        mark = ratio <= 1.5 ? "yes" : "**no**"
        res = nrg == ntool ? nrg : nrg " / " ntool
        printf "| %s | %s | %s | %.0f | %.0f | %.2f | %.2f | %.0f | %.0f | %s |\n", tree, name, res,
          $1 * 1000, $3 * 1000, ratio, $4 / $2, $5 * 1000, $6 * 1000, mark
      }' | tee -a "$rows" >&2
  done
  cd "$root"
done

ncpu=$(nproc)
{
  echo "<!-- results:begin (written by scripts/bench-search.sh) -->"
  echo "Run on $(date -u +%Y-%m-%d): $ncpu cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')),"
  echo "$(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo) RAM, $(go version | cut -d' ' -f3),"
  echo "$(rg --version | sed -n 1p); timed by $timer_desc; warm page cache."
  echo
  cat "$facts"
  echo
  echo "| tree | case | results | rg ms | agentloop ms | ratio | ratio of best runs | rg CPU ms | agentloop CPU ms | ≤ 1.5× |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|:---:|"
  cat "$rows"
  echo "<!-- results:end -->"
} >"$work/results.md"
cat "$work/results.md"

doc="$root/docs/benchmarks-search.md"
if [ "${BENCH_NO_DOC:-}" = 1 ] || [ ${#trees[@]} -ne 2 ]; then exit 0; fi
if [ -f "$doc" ] && grep -q '^<!-- results:begin' "$doc"; then
  awk -v res="$work/results.md" '
    /^<!-- results:begin/ { while ((getline l < res) > 0) print l; skip = 1; next }
    /^<!-- results:end/ { skip = 0; next }
    !skip' "$doc" >"$work/doc.md"
  cp "$work/doc.md" "$doc"
else
  { echo "# Grep and Glob against ripgrep"; echo; cat "$work/results.md"; } >"$doc"
fi
echo "wrote $doc" >&2
