#!/usr/bin/env bash
# Checksums of every example's outputs, to show that a restructuring changed no result.
#
#   scripts/golden-outputs.sh > before.txt     # on the old commit
#   scripts/golden-outputs.sh > after.txt      # on the new one
#   diff before.txt after.txt                  # empty: outputs byte-identical
#
# Runs every scenario under examples/ (the deadlock examples exit with code 4 by design)
# and the HPCC config, with --threads 1 and 2, without plots (their encoders are not under
# test here). Prints one "sha256  example/threads/file" line per output file. The DSH
# paper's Fig. 14 scenario is left out: 20 ms of arrivals on 256 hosts take minutes per run
# (its sweep, examples/dsh/paper-fig14-sweep.toml, runs it). Sweep files are not scenarios.
#
#   HEADROOM=target/pgo/headroom scripts/golden-outputs.sh   # checks that binary instead
#                                                            # (e.g. the profile-guided one)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${HEADROOM:-}" ]; then
  bin="$(realpath "$HEADROOM")"
else
  cargo build --release --locked -q -p headroom
  bin="${CARGO_TARGET_DIR:-$PWD/target}/release/headroom"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

run() { # name threads args...
  local name="$1" threads="$2"
  shift 2
  local out="$work/$name/t$threads"
  "$bin" run "$@" --threads "$threads" --quiet --no-plots --out "$out" >/dev/null 2>&1 || true
  (cd "$work" && find "$name/t$threads" -type f ! -name .headroom-files | sort | xargs sha256sum)
}

for threads in 1 2; do
  for f in $(find examples -name '*.toml' -not -path '*/sonic/*' -not -path '*/sweep/*' \
      -not -name 'paper-fig14.toml' -not -name '*-sweep.toml' | sort); do
    run "${f%.toml}" "$threads" "$f"
  done
  run hpcc "$threads" --hpcc-config examples/hpcc/config.txt
done
