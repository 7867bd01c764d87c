#!/usr/bin/env bash
# Default threads against --threads 1: wall time of `headroom run` on three runs (the HPCC
# fat tree whole, a short slice of it, and a leaf-spine with 10 ns links), each on an idle
# machine and with one CPU-bound process beside it. Prints the median of N runs per cell
# (3N for the two short cases: the machine's noise is a larger share of a second), the
# ratio of the medians default / one thread, and the median of the ratios of each pair of
# runs taken one after the other (less sensitive to a machine whose speed drifts). The
# goal: at most 1.10.
#
#   scripts/threads-benchmark.sh [N]        # N runs per cell, default 3
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-3}"
cargo build --release --locked -q -p headroom
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/headroom"
work="$(mktemp -d)"
trap 'kill "${load_pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT

# The tiny-window case: the web-search leaf-spine example with 10 ns links.
sed 's/^delay = .*/delay = "10ns"/' examples/websearch-leaf-spine.toml > "$work/tiny.toml"
grep -q '^delay = "10ns"' "$work/tiny.toml"

declare -A cases=(
  [long]="run --hpcc-config examples/hpcc/config.txt"
  [short]="run --hpcc-config examples/hpcc/config.txt --stop-time 2.001s"
  [tiny-links]="run $work/tiny.toml"
)

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

time_one() { # args...: wall seconds of one run
  local t0 t1
  t0=$(date +%s.%N)
  "$bin" "$@" --quiet --no-plots --out "$work/out" >/dev/null 2>&1
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}

printf '%-11s %-6s %10s %10s %7s %11s\n' case load default one ratio pair-ratio
for load in idle loaded; do
  if [ "$load" = loaded ]; then
    timeout 3600 sh -c 'while :; do :; done' &
    load_pid=$!
  fi
  for c in short long tiny-links; do
    read -r -a args <<< "${cases[$c]}"
    d=(); o=(); r=()
    runs=$n
    [ "$c" = long ] || runs=$((3 * n))
    for _ in $(seq "$runs"); do
      d+=("$(time_one "${args[@]}")")
      o+=("$(time_one "${args[@]}" --threads 1)")
      r+=("$(echo "${d[-1]} / ${o[-1]}" | bc -l)")
    done
    md=$(printf '%s\n' "${d[@]}" | median)
    mo=$(printf '%s\n' "${o[@]}" | median)
    mr=$(printf '%s\n' "${r[@]}" | median)
    printf '%-11s %-6s %9.2fs %9.2fs %7.2f %11.2f\n' "$c" "$load" "$md" "$mo" "$(echo "$md / $mo" | bc -l)" "$mr"
  done
  if [ "$load" = loaded ]; then
    kill "$load_pid"
    unset load_pid
  fi
done
