#!/usr/bin/env bash
# A profile-guided build of `headroom`: the same code, laid out and inlined by LLVM after
# a profile of how it runs. On the 320-host benchmark it takes about 0.95 of the plain
# release build's wall time on one thread and on two (docs/performance.md, "Profile-guided
# build" and "Fewer instructions in the event queue and the MMU's common paths").
#
#   scripts/build-pgo.sh                 # writes target/pgo/headroom
#   target/pgo/headroom bench            # or any other command
#
# Steps: an instrumented build; the training runs below, which write the profile; a build
# that uses it. The training runs are example scenarios, none of them the benchmark (its
# topology, flows and config reader are not among them), so the benchmark measures what
# the profile gives to a run it has not seen.
#
# Needs the llvm-profdata of rustc's own LLVM (`rustup component add llvm-tools`, which the
# script runs when it is missing).
# Takes about ten minutes on two cores (two release builds and half a minute of training).
set -euo pipefail
cd "$(dirname "$0")/.."

sysroot="$(rustc --print sysroot)"
host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="$sysroot/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ] && command -v rustup >/dev/null 2>&1; then
  echo "== rustup component add llvm-tools (for llvm-profdata)" >&2
  rustup component add llvm-tools >&2 || true
fi
if [ ! -x "$profdata" ]; then
  echo "build-pgo: $profdata not found; install it with: rustup component add llvm-tools" >&2
  exit 1
fi

target="${CARGO_TARGET_DIR:-$PWD/target}"
work="$target/pgo"
rm -rf "$work/profiles" "$work/train"
mkdir -p "$work/profiles" "$work/train"

echo "== instrumented build" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$work/profiles" \
  cargo build --release --locked -q -p headroom --target-dir "$work/gen"

echo "== training runs" >&2
training=(
  examples/websearch-leaf-spine.toml
  examples/dsh/large-scale.toml
  examples/tcd/fct-ws60.toml
  examples/credit/incast-16to1.toml
  examples/htsim/permutation-k4.toml
  examples/flow-channels/dragonfly.toml
  examples/incast-16to1-star.toml
)
for f in "${training[@]}"; do
  "$work/gen/release/headroom" run "$f" --threads 1 --quiet --no-plots --out "$work/train/out" >/dev/null
done
# The partitioned run's windows and mail, too.
"$work/gen/release/headroom" run examples/websearch-leaf-spine.toml --threads 2 --quiet \
  --no-plots --out "$work/train/out" >/dev/null
"$profdata" merge -o "$work/merged.profdata" "$work/profiles"

echo "== build with the profile" >&2
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$work/merged.profdata" \
  cargo build --release --locked -q -p headroom --target-dir "$work/use"
cp "$work/use/release/headroom" "$work/headroom"
echo "$work/headroom"
