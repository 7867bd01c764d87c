#!/usr/bin/env python3
"""Compare two FCT files in the ns-3 HPCC simulator's format.

    scripts/compare-fct.py OURS.txt THEIRS.txt [FLOWS]

Each line: `sip dip sport dport size start_ns fct_ns standalone_fct_ns`. Prints completed
flows, slowdown p50/p95/p99 (percentile = sorted[int(p*n)], as the reference README computes
them) for all flows and for flows under 100 KB, and the ratios ours/theirs. FLOWS, the flow
count of the list, is only printed. Exit status 1 when a ratio leaves the fidelity
tolerance (p50 within 15 %, p99 within 25 %, completed flows within 5 %).
"""
import sys


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 8:
                continue
            size, fct, ideal = int(parts[4]), int(parts[6]), int(parts[7])
            rows.append((size, fct / ideal))
    return rows


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(int(p * len(xs)), len(xs) - 1)] if xs else float("nan")


def stats(rows):
    all_ = [s for _, s in rows]
    short = [s for size, s in rows if size < 100_000]
    return {
        "completed": len(rows),
        "p50": pct(all_, 0.5),
        "p95": pct(all_, 0.95),
        "p99": pct(all_, 0.99),
        "short p50": pct(short, 0.5),
        "short p99": pct(short, 0.99),
    }


def main():
    ours, theirs = stats(load(sys.argv[1])), stats(load(sys.argv[2]))
    ok = True
    print(f"{'':10} {'ours':>8} {'theirs':>8} {'ratio':>6}")
    for k in ours:
        r = ours[k] / theirs[k] if theirs[k] else float("nan")
        print(f"{k:10} {ours[k]:8.3f} {theirs[k]:8.3f} {r:6.3f}")
        tol = {"completed": 0.05, "p50": 0.15, "p99": 0.25}.get(k)
        if tol is not None and abs(r - 1) > tol:
            ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
