#!/usr/bin/env python3
"""Development check: compare FCT files in the DCQCN/TCD ns-3 simulator's format.

    scripts/compare-ns3-rdma-fct.py THEIRS_ECN THEIRS_TCD OURS_ECN OURS_TCD

Each line: `src dst payload_bytes start_s fct_s base_fct_s`; slowdown = fct / base.
Flows are matched by (src, dst, payload, start). Prints, per mode, the flows of each file,
slowdown p50/p90/p99 (percentile = sorted[int(p*n)]) theirs and ours, the per-flow
ratio ours/theirs, and the ratio of TCD-off to TCD-on slowdown in both simulators.
Produce ours with `headroom run --ns3-rdma-config examples/tcd/ns3-rdma/fct/config_ws60_<mode>.txt`
(the FCT file is written to `result/fct.txt` in the working directory).
"""
import statistics
import sys


def load(path):
    d = {}
    with open(path) as f:
        for line in f:
            s, dst, size, start, fct, base = line.split()
            d[(s, dst, size, start)] = float(fct) / float(base)
    return d


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    theirs = {"ecn": load(sys.argv[1]), "tcd": load(sys.argv[2])}
    ours = {"ecn": load(sys.argv[3]), "tcd": load(sys.argv[4])}
    for m in ("ecn", "tcd"):
        a, b = theirs[m], ours[m]
        common = set(a) & set(b)
        print(f"{m}: flows theirs {len(a)} ours {len(b)} matched {len(common)}")
        for q in (0.5, 0.9, 0.99):
            print(f"  p{int(q * 100)} slowdown theirs {pct(a.values(), q):.3f} ours {pct(b.values(), q):.3f}")
        r = [b[k] / a[k] for k in common]
        if r:
            print(f"  per-flow ours/theirs: median {statistics.median(r):.3f} "
                  f"p10 {pct(r, 0.1):.3f} p90 {pct(r, 0.9):.3f}")
    for q in (0.5, 0.99):
        rt = pct(theirs["ecn"].values(), q) / pct(theirs["tcd"].values(), q)
        ro = pct(ours["ecn"].values(), q) / pct(ours["tcd"].values(), q)
        print(f"TCD-off / TCD-on slowdown p{int(q * 100)}: theirs {rt:.3f} ours {ro:.3f}")


if __name__ == "__main__":
    main()
