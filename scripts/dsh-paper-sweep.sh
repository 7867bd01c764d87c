#!/usr/bin/env bash
# The DSH paper's large-scale sweep (ICDCS'23, Fig. 14): examples/dsh/paper-fig14.toml at
# background loads l = 0.1 ... 0.8 (fan-ins at 0.9 - l), under SIH, SHP and DSH, with DCQCN
# and with PowerTCP. Each point is one `headroom compare --mmu sih,shp,dsh` (the three
# schemes run in parallel); points already in the output directory are kept, so an
# interrupted sweep resumes where it stopped.
#
#   scripts/dsh-paper-sweep.sh [--loads "0.1 0.2 ..."] [--cc "dcqcn powertcp"]
#                              [--duration 20ms] [--seed N] [--out DIR] [--bin PATH]
#
# --bin runs a copy of the binary instead of building target/release/headroom (so that a
# long sweep is not affected by builds while it runs).
#
# Writes DIR/sweep.csv (one row per cc, load and scheme: mean FCT of background and fan-in
# flows, normalised to SIH's, PAUSEs and drops), DIR/sweep.md (the same as a table) and
# DIR/sweep.svg (normalised mean FCT against the background load).
set -euo pipefail
cd "$(dirname "$0")/.."
loads="0.1 0.2 0.3 0.4 0.5 0.6 0.7 0.8"
ccs="dcqcn powertcp"
duration="20ms"
seed=1
out="out/dsh-paper-sweep"
bin=""
while [ $# -gt 0 ]; do
  case "$1" in
    --loads) loads="$2"; shift 2 ;;
    --cc) ccs="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
if [ -z "$bin" ]; then
  cargo build --release --locked -q -p headroom
  bin="${CARGO_TARGET_DIR:-$PWD/target}/release/headroom"
fi
mkdir -p "$out/scenarios"
for cc in $ccs; do
  for l in $loads; do
    point="$out/$cc-l$l"
    if [ -s "$point/compare.json" ]; then
      echo "== $cc l=$l: done before, kept"
      continue
    fi
    file="$out/scenarios/$cc-l$l.toml"
    python3 scripts/dsh_sweep.py scenario examples/dsh/paper-fig14.toml "$cc" "$l" "$duration" > "$file"
    echo "== $cc l=$l ($(date +%H:%M:%S))"
    start=$(date +%s)
    "$bin" compare "$file" --mmu sih,shp,dsh --seed "$seed" --quiet --no-plots --out "$point.tmp"
    rm -rf "$point" && mv "$point.tmp" "$point"
    echo "   $(( $(date +%s) - start )) s"
  done
done
# The summary covers every congestion control with points in the directory, not only this
# invocation's (a sweep run in parts keeps one table and one plot).
present=$(for cc in dcqcn powertcp; do ls -d "$out/$cc-l"* >/dev/null 2>&1 && echo "$cc"; done)
python3 scripts/dsh_sweep.py summary "$out" $present
