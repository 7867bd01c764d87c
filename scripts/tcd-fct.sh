#!/usr/bin/env bash
# TCD's FCT experiments (examples/tcd/fct-*.toml: one pod of a k = 10 fat tree, 25 hosts at
# 40 Gb/s): web search at 60 % load, and web search at 50 % plus periodic 16-to-1 incasts
# of 256 KB, each with DCQCN and with TIMELY, TCD off (RED) and on (tcd-released, the
# authors' rule; tcd, the paper's state machine with the derived max(T_on)). Prints FCT
# slowdown p50 / p99 by flow size and the off/on ratios (above 1: TCD helps).
#
#   scripts/tcd-fct.sh [seed]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -q -p headroom
bin="${CARGO_TARGET_DIR:-$PWD/target}/release/headroom"
seed="${1:-6}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
runs=()
for scenario in fct-ws60 fct-ws50-incast; do
  for cc in dcqcn timely; do
    file="examples/tcd/$scenario.toml"
    if [ "$cc" = timely ]; then
      # The same scenario with TIMELY: its keys replace DCQCN's, the CNP keys go.
      sed -e 's/^algorithm = "dcqcn"/algorithm = "timely"/' -e '/^preset = "paper"/d' \
          -e '/^cnp_interval/d' -e '/^cnp_mode/d' \
          -e "s|^file = \"../../|file = \"$PWD/|" "$file" > "$work/$scenario-$cc.toml"
      file="$work/$scenario-$cc.toml"
    fi
    "$bin" compare "$file" --detector red,tcd-released,tcd --seed "$seed" --quiet --no-plots \
      --out "$work/$scenario-$cc"
    runs+=("$scenario-$cc")
  done
done
python3 - "$work" "${runs[@]}" <<'PY'
import json, sys
work, runs = sys.argv[1], sys.argv[2:]
def stats(run, det):
    s = json.load(open(f"{work}/{run}/{det}/summary.json"))
    rows = [("all", s["fct"]["overall"])] + [(b["bucket"]["name"], b["stats"]) for b in s["fct"]["by_size"]]
    return {n: (st["flows"], st["slowdown_p50"], st["slowdown_p99"]) for n, st in rows}, s["marking"], s["pfc"]["pause_frames"]
f = lambda x: "-" if x is None else f"{x:.2f}"
r = lambda a, b: "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"
for run in runs:
    off, moff, poff = stats(run, "red")
    print(f"\n{run}: PAUSE frames {poff}; RED CE {moff['ce_marked']}")
    for det in ("tcd-released", "tcd"):
        on, mon, pon = stats(run, det)
        print(f"  {det}: PAUSE frames {pon}; CE {mon['ce_marked']}, UE {mon['ue_marked']}")
        print(f"  {'size':<11}{'flows':>6}{'p50 off':>9}{'p50 on':>8}{'off/on':>8}{'p99 off':>9}{'p99 on':>8}{'off/on':>8}")
        for name, (n, p50, p99) in off.items():
            _, q50, q99 = on[name]
            print(f"  {name:<11}{n:>6}{f(p50):>9}{f(q50):>8}{r(p50, q50):>8}{f(p99):>9}{f(q99):>8}{r(p99, q99):>8}")
PY
