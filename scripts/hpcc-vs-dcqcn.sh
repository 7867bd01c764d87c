#!/usr/bin/env bash
# The HPCC paper's qualitative result on its 320-host fat tree: web-search flows at 30 % and
# 50 % load (5 ms of arrivals, seed 7, made by `headroom workload`), run under DCQCN
# (examples/hpcc/config.txt) and HPCC (examples/hpcc/config-hpcc.txt). Prints, per load,
# the 99th-percentile FCT slowdown of flows under 100 KB and the PFC PAUSE frames of each,
# and their ratio HPCC / DCQCN.
#
#   scripts/hpcc-vs-dcqcn.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p headroom
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/headroom"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for load in 30 50; do
  "$bin" workload --topology data/topologies/hpcc_fat_320.txt --load "0.$load" \
    --cdf websearch --duration 5ms --start 2s --seed 7 -o "$work/flow$load.txt" >/dev/null
  for mode in dcqcn hpcc; do
    config=examples/hpcc/config.txt
    [ "$mode" = hpcc ] && config=examples/hpcc/config-hpcc.txt
    sed -e "s|^FLOW_FILE .*|FLOW_FILE $work/flow$load.txt|" \
        -e "s|^TOPOLOGY_FILE .*|TOPOLOGY_FILE $PWD/data/topologies/hpcc_fat_320.txt|" \
        -e "s|^FCT_OUTPUT_FILE .*|FCT_OUTPUT_FILE $work/fct_${mode}_$load.txt|" \
        -e "s|^PFC_OUTPUT_FILE .*|PFC_OUTPUT_FILE $work/pfc_${mode}_$load.txt|" \
        "$config" > "$work/config_${mode}_$load.txt"
    "$bin" run --hpcc-config "$work/config_${mode}_$load.txt" --quiet --no-plots \
      --out "$work/out_${mode}_$load" 2>/dev/null
  done
done
python3 - "$work" <<'PY'
import sys
work = sys.argv[1]

def short_p99(path):
    xs = sorted(int(p[6]) / int(p[7]) for p in (l.split() for l in open(path))
                if len(p) >= 8 and int(p[4]) < 100_000)
    return xs[min(int(0.99 * len(xs)), len(xs) - 1)]

def pauses(path):
    return sum(1 for l in open(path) if len(l.split()) >= 5 and l.split()[4] == "1")

print(f"{'load':>4} {'DCQCN <100KB p99':>17} {'HPCC <100KB p99':>16} {'ratio':>6} {'PAUSEs DCQCN':>13} {'PAUSEs HPCC':>12}")
for load in (30, 50):
    d, h = (short_p99(f"{work}/fct_{m}_{load}.txt") for m in ("dcqcn", "hpcc"))
    pd, ph = (pauses(f"{work}/pfc_{m}_{load}.txt") for m in ("dcqcn", "hpcc"))
    print(f"{load:>3}% {d:17.2f} {h:16.2f} {h / d:6.2f} {pd:13} {ph:12}")
PY
