#!/usr/bin/env python3
"""The DSH paper's Fig. 14 sweep, read (standard library only). Run the sweep first:
`headroom sweep examples/dsh/paper-fig14-sweep.toml` (or with --slurm, then
`headroom sweep collect OUT`); OUT is its output directory (default out/dsh-paper-fig14).

  dsh_sweep.py summary OUT                    writes OUT/sweep.csv, sweep.md, sweep.svg: mean
                                              FCT of background and fan-in flows per cc, load
                                              and scheme, normalised to SIH's, against the
                                              paper's averages
  dsh_sweep.py by-start OUT CC LOAD [BIN_MS]  mean FCT of background and fan-in flows by
                                              start time (bins of BIN_MS, default 5), per
                                              scheme, with DSH / SIH: whether the fabric was
                                              in a steady state
  dsh_sweep.py queues OUT CC LOAD             mean bytes queued per egress port by tier (leaf
                                              to host, leaf to spine, spine to leaf), per
                                              scheme; needs runs with [output] sample_interval
"""
import csv
import json
import os
import sys

TOTAL_LOAD = 0.9
SCHEMES = ("sih", "shp", "dsh")
# The paper's Fig. 14: DSH's average FCT against SIH's, averaged over the loads.
PAPER = {"dcqcn": {"background": -10.1, "fan-in": -43.3},
         "powertcp": {"background": -31.1, "fan-in": -57.7}}


BG = "fct.by_workload[0].stats.mean_fct_ns"
FAN = "fct.by_workload[1].stats.mean_fct_ns"


def results(out):
    path = os.path.join(out, "results.json")
    if not os.path.exists(path):
        sys.exit(f"{path}: missing; run `headroom sweep examples/dsh/paper-fig14-sweep.toml` "
                 "(or `headroom sweep collect OUT`) first")
    return json.load(open(path))


def points(out):
    rows = []
    for r in results(out):
        rows.append({
            "cc": r["cc"], "load": float(r["load"]), "scheme": r["scheme"],
            "background_mean_fct_us": (r.get(BG) or 0) / 1e3,
            "background_norm": r.get(BG + "/sih"),
            "fanin_mean_fct_us": (r.get(FAN) or 0) / 1e3,
            "fanin_norm": r.get(FAN + "/sih"),
            "flows_finished": r["flows.finished"], "flows": r["flows.total"],
            "queue_pauses": r["pfc.pause_frames"], "port_pauses": r["pfc.port_level_pause_frames"],
            "lossless_drops": r["drops.lossless"], "drops": r["drops.total"],
        })
    rows.sort(key=lambda r: (r["cc"], r["load"], SCHEMES.index(r["scheme"])))
    return rows


def runs(out, cc, load):
    """The run directory of each scheme at one cc and load."""
    found = {r["scheme"]: os.path.join(out, "runs", r["point"])
             for r in results(out) if r["cc"] == cc and float(r["load"]) == float(load)}
    if not found:
        sys.exit(f"{out}: no finished point with cc = {cc}, load = {load}")
    return {s: found[s] for s in SCHEMES if s in found}


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


def svg(rows, ccs, path):
    """Normalised mean FCT vs background load: one panel per (cc, flow kind)."""
    panels = [(cc, kind) for cc in ccs for kind in ("background", "fanin")]
    w, h, pad = 360, 260, 50
    colours = {"sih": "#444444", "shp": "#1f77b4", "dsh": "#d62728"}
    cols = 2
    nrows = (len(panels) + 1) // 2
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * w}" height="{nrows * h + 30}" '
             'font-family="sans-serif" font-size="11">',
             f'<rect width="100%" height="100%" fill="white"/>',
             f'<text x="10" y="18" font-size="13">Mean FCT normalised to SIH vs background load '
             f'(fan-ins at {TOTAL_LOAD} - load)</text>']
    for i, (cc, kind) in enumerate(panels):
        x0, y0 = (i % cols) * w, 30 + (i // cols) * h
        sel = [r for r in rows if r["cc"] == cc and r[f"{kind}_norm"] is not None]
        if not sel:
            continue
        ys = [r[f"{kind}_norm"] for r in sel]
        lo, hi = min(ys + [1.0]), max(ys + [1.0])
        lo, hi = lo - 0.05 * (hi - lo + 0.1), hi + 0.05 * (hi - lo + 0.1)
        px = lambda l: x0 + pad + (l - 0.05) / 0.8 * (w - pad - 20)
        py = lambda v: y0 + h - pad - 10 - (v - lo) / (hi - lo) * (h - pad - 30)  # inside the box: y0 + 20 ... y0 + h - pad - 10
        label = "fan-in" if kind == "fanin" else "background"
        parts.append(f'<text x="{x0 + pad}" y="{y0 + 14}">{cc.upper()}, {label} flows</text>')
        parts.append(f'<rect x="{x0 + pad}" y="{y0 + 20}" width="{w - pad - 20}" height="{h - pad - 30}" '
                     'fill="none" stroke="black"/>')
        for k in range(5):
            v = lo + (hi - lo) * k / 4
            parts.append(f'<text x="{x0 + 5}" y="{py(v) + 4:.1f}">{v:.2f}</text>')
        for l in sorted({r["load"] for r in sel}):
            parts.append(f'<text x="{px(l) - 8:.1f}" y="{y0 + h - pad + 26}">{l:g}</text>')
        for scheme in SCHEMES:
            pts = [(r["load"], r[f"{kind}_norm"]) for r in sel if r["scheme"] == scheme]
            if not pts:
                continue
            line = " ".join(f"{px(l):.1f},{py(v):.1f}" for l, v in pts)
            c = colours[scheme]
            parts.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="2"/>')
            for l, v in pts:
                parts.append(f'<circle cx="{px(l):.1f}" cy="{py(v):.1f}" r="3" fill="{c}"/>')
        for k, scheme in enumerate(SCHEMES):
            parts.append(f'<text x="{x0 + w - 130 + 36 * k}" y="{y0 + 14}" fill="{colours[scheme]}">'
                         f'{scheme.upper()}</text>')
        parts.append(f'<text x="{x0 + w / 2 - 40}" y="{y0 + h - 8}">background load</text>')
    parts.append("</svg>")
    open(path, "w").write("\n".join(parts) + "\n")


def summary(out):
    rows = points(out)
    ccs = [cc for cc in ("dcqcn", "powertcp") if any(r["cc"] == cc for r in rows)]
    if not rows:
        sys.exit(f"no finished points under {out}")
    keys = list(rows[0].keys())
    with open(os.path.join(out, "sweep.csv"), "w") as f:
        f.write(",".join(keys) + "\n")
        for r in rows:
            f.write(",".join("" if r[k] is None else str(r[k]) for k in keys) + "\n")
    lines = ["| cc | load | scheme | background mean FCT, us (/ SIH) | fan-in mean FCT, us (/ SIH) "
             "| flows finished | queue / port PAUSEs | lossless drops | all drops |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['cc']} | {r['load']:g} | {r['scheme'].upper()} "
                     f"| {r['background_mean_fct_us']:.1f} ({fmt(r['background_norm'])}) "
                     f"| {r['fanin_mean_fct_us']:.1f} ({fmt(r['fanin_norm'])}) "
                     f"| {r['flows_finished']}/{r['flows']} | {r['queue_pauses']} / {r['port_pauses']} "
                     f"| {r['lossless_drops']} | {r['drops']} |")
    lines += ["", "DSH against SIH, averaged over the loads (paper's Fig. 14 in brackets):", ""]
    for cc in ccs:
        for kind, key in (("background", "background_norm"), ("fan-in", "fanin_norm")):
            vals = [r[key] for r in rows if r["cc"] == cc and r["scheme"] == "dsh" and r[key]]
            if vals:
                ours = (sum(vals) / len(vals) - 1) * 100
                paper = PAPER.get(cc, {}).get(kind)
                lines.append(f"- {cc}, {kind}: {ours:+.1f} % ({'' if paper is None else f'{paper:+.1f} %'}) "
                             f"over {len(vals)} loads")
    open(os.path.join(out, "sweep.md"), "w").write("\n".join(lines) + "\n")
    svg(rows, ccs, os.path.join(out, "sweep.svg"))
    print("\n".join(lines))
    print(f"\nwrote {out}/sweep.csv, sweep.md, sweep.svg")


# A fan-in flow is one of exactly the fan-in size (flows.csv has no workload column); web-
# search sizes are interpolated from the CDF, so a background flow of exactly 64,000 B is
# rare enough not to matter (check: the fan-in count is a multiple of the fan-in degree).
FANIN_SIZE = 64000


def by_start(out, cc, load, bin_ms=5.0):
    point = f"{out} ({cc}, l = {load})"
    table = {}
    for scheme, run in runs(out, cc, load).items():
        path = os.path.join(run, "flows.csv")
        if not os.path.exists(path):
            continue
        bins = {}
        for r in csv.DictReader(open(path)):
            b = int(float(r["start_ns"]) // (bin_ms * 1e6))
            kind = "fan-in" if int(r["size"]) == FANIN_SIZE else "background"
            acc = bins.setdefault((b, kind), [0, 0.0])
            acc[0] += 1
            acc[1] += float(r["fct_ns"]) / 1e3
        if not any(kind == "fan-in" for _, kind in bins):
            sys.exit(f"{path}: no flow of {FANIN_SIZE} B, the fan-in size this assumes")
        table[scheme] = {k: v[1] / v[0] for k, v in bins.items()}
    if "sih" not in table:
        sys.exit(f"{point}: no SIH run")
    print(f"{point}: mean FCT in us by start time (/ SIH)")
    print("| start, ms | kind | " + " | ".join(s.upper() for s in table) + " |")
    print("|---|---|" + "---|" * len(table))
    for (b, kind) in sorted(table["sih"]):
        base = table["sih"][(b, kind)]
        cells = [f"{t[(b, kind)]:.0f} ({t[(b, kind)] / base:.3f})" if (b, kind) in t else ""
                 for t in table.values()]
        print(f"| {b * bin_ms:g}-{(b + 1) * bin_ms:g} | {kind} | " + " | ".join(cells) + " |")


def queues(out, cc, load):
    """Mean bytes in each egress port's queues over the samples, by tier of the port.

    A port's tier comes from the node at its other end (marks.csv names it): a switch with a
    host behind a port is a leaf."""
    print(f"{out} ({cc}, l = {load}): mean bytes queued per egress port, KB (samples of queues.csv)")
    print("| scheme | leaf to spine | spine to leaf | leaf to host | samples |")
    print("|---|---|---|---|---|")
    for scheme, run in runs(out, cc, load).items():
        if not os.path.exists(os.path.join(run, "queues.csv")):
            continue
        hosts = json.load(open(os.path.join(run, "summary.json")))["config"]["hosts"]
        peers = {}
        for r in csv.DictReader(open(os.path.join(run, "marks.csv"))):
            peers[(int(r["node"]), int(r["port"]))] = int(r["peer"])
        leaves = {node for (node, _), peer in peers.items() if peer < hosts}

        def tier(node, port):
            if node not in leaves:
                return "spine to leaf"
            return "leaf to host" if peers[(node, port)] < hosts else "leaf to spine"

        ports, queued, times = {}, {}, set()
        for key in peers:
            ports[tier(*key)] = ports.get(tier(*key), 0) + 1
        for r in csv.DictReader(open(os.path.join(run, "queues.csv"))):
            key = (int(r["node"]), int(r["port"]))
            if key not in peers:
                sys.exit(f"{run}/queues.csv: port {key} never sent data (marks.csv)")
            times.add(r["time_ns"])
            queued[tier(*key)] = queued.get(tier(*key), 0) + int(r["bytes"])
        if not times:
            sys.exit(f"{run}/queues.csv: no samples")
        cells = [f"{queued.get(t, 0) / len(times) / ports[t] / 1e3:.0f}" if t in ports else ""
                 for t in ("leaf to spine", "spine to leaf", "leaf to host")]
        print(f"| {scheme.upper()} | " + " | ".join(cells) + f" | {len(times)} |")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "summary":
        summary(sys.argv[2])
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "by-start":
        by_start(*sys.argv[2:5], *(float(a) for a in sys.argv[5:]))
    elif len(sys.argv) == 5 and sys.argv[1] == "queues":
        queues(*sys.argv[2:5])
    else:
        sys.exit(__doc__)
