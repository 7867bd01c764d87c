#!/usr/bin/env bash
# Development check against the ns-3 HPCC simulator's own outputs for each congestion
# control mode (../shared/peers/ns3-hpcc: its configs, flow list and FCT files for DCQCN,
# HPCC, TIMELY and DCTCP on its 320-host fat tree). Runs each config unchanged and compares
# FCT slowdowns with scripts/compare-fct.py; exits non-zero when a mode leaves the fidelity
# tolerance (p50 within 15 %, p99 within 25 %, completed flows within 5 %).
#
#   scripts/ns3-fidelity.sh [PEERS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
peers="$(cd "${1:-../shared/peers/ns3-hpcc}" && pwd)"
cargo build --release --locked -q -p headroom
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/headroom"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ln -s "$PWD/data/topologies/hpcc_fat_320.txt" "$work/fat.txt"
echo 0 > "$work/trace.txt"
cp "$peers"/flow_*.txt "$work/"
status=0
for config in "$peers"/*_config.txt; do
  name="$(basename "$config" _config.txt)"
  cp "$config" "$work/"
  (cd "$work" && "$bin" run --hpcc-config "$(basename "$config")" --quiet --no-plots \
    --out "out_$name" 2>/dev/null)
  echo "== $name"
  python3 scripts/compare-fct.py "$work/out_$name/fct.txt" "$peers/${name}_fct.txt" || status=1
done
exit $status
