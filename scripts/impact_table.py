#!/usr/bin/env python3
"""GPCNeT's congestion-impact table from a run of
`headroom sweep examples/flow-channels/congestion-impact-sweep.toml` (standard library
only). OUT is the sweep's output directory (default out/congestion-impact).

  impact_table.py OUT     prints a Markdown table: per topology and fabric, the victim's
                          mean and 99th-percentile latency (8 B ring) and bandwidth
                          (128 KiB ring) alone, and the congestion impact of each
                          congestor (the figure with it over the figure without; for
                          bandwidth, without over with, so that 1 is no impact and
                          larger is worse, as GPCNeT reports it); writes OUT/impact.md
"""
import json
import os
import sys

LAT = "fct.by_workload[0].stats.mean_fct_ns"
P99 = "fct.by_workload[0].stats.fct_p99_ns"
BW = "fct.by_workload[1].stats.mean_goodput_gbps"


def main(out):
    path = os.path.join(out, "results.json")
    if not os.path.exists(path):
        sys.exit(f"{path}: missing; run `headroom sweep "
                 "examples/flow-channels/congestion-impact-sweep.toml` first")
    rows = json.load(open(path))
    congestors = [c for c in dict.fromkeys(r["congestor"] for r in rows) if c != "none"]
    head = ["topology", "fabric", "alone: latency mean / p99 (us)", "alone: bandwidth (Gb/s)"]
    for c in congestors:
        head.append(f"{c}: impact on latency mean / p99, bandwidth")
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (topo, fabric) in dict.fromkeys((r["topology"], r["fabric"]) for r in rows):
        by = {r["congestor"]: r for r in rows
              if r["topology"] == topo and r["fabric"] == fabric}
        alone = by.get("none")
        if alone is None:
            continue
        cells = [topo, fabric,
                 f"{alone[LAT] / 1000:.2f} / {alone[P99] / 1000:.2f}", f"{alone[BW]:.1f}"]
        for c in congestors:
            r = by.get(c)
            if r is None:
                cells.append("not run")
                continue
            cell = (f"{r[LAT] / alone[LAT]:.2f}x / {r[P99] / alone[P99]:.2f}x, "
                    f"{alone[BW] / r[BW]:.2f}x")
            if r["run.stop_reason"] != "all_flows_done":
                cell += f" ({r['run.stop_reason']}, {r['flows.unfinished']} flows unfinished)"
            cells.append(cell)
        lines.append("| " + " | ".join(cells) + " |")
    table = "\n".join(lines) + "\n"
    open(os.path.join(out, "impact.md"), "w").write(table)
    print(table, end="")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "out/congestion-impact")
