#!/usr/bin/env python3
"""Helpers of scripts/dsh-paper-sweep.sh (standard library only).

  dsh_sweep.py scenario BASE.toml CC LOAD DURATION   prints BASE with background load LOAD,
                                                     fan-ins at 0.9 - LOAD, arrivals for
                                                     DURATION and congestion control CC
  dsh_sweep.py summary DIR CC...                     writes DIR/sweep.csv, sweep.md, sweep.svg
  dsh_sweep.py by-start POINT [BIN_MS]               mean FCT of background and fan-in flows
                                                     by start time (bins of BIN_MS, default
                                                     5), per scheme, with DSH / SIH: whether
                                                     the fabric was in a steady state
  dsh_sweep.py queues POINT                          mean bytes queued per egress port by
                                                     tier (leaf to host, leaf to spine,
                                                     spine to leaf), per scheme; needs a run
                                                     with [output] sample_interval
"""
import csv
import json
import os
import re
import sys

TOTAL_LOAD = 0.9
SCHEMES = ("sih", "shp", "dsh")
# The paper's Fig. 14: DSH's average FCT against SIH's, averaged over the loads.
PAPER = {"dcqcn": {"background": -10.1, "fan-in": -43.3},
         "powertcp": {"background": -31.1, "fan-in": -57.7}}


def scenario(base, cc, load, duration):
    text = open(base).read()
    load = float(load)
    if not 0.0 < load < TOTAL_LOAD:
        sys.exit(f"load {load} must be in (0, {TOTAL_LOAD})")
    # workload[0] is the background, workload[1] the fan-ins (see the example's comments).
    blocks = text.split("[[workload]]")
    if len(blocks) != 3:
        sys.exit(f"{base}: expected two [[workload]] entries")
    bg, fan = blocks[1], blocks[2]
    bg = re.sub(r"(?m)^load = .*$", f"load = {load:g}", bg)
    fan = re.sub(r"(?m)^load = .*$", f"load = {TOTAL_LOAD - load:.10g}", fan)
    bg, fan = (re.sub(r'(?m)^duration = .*$', f'duration = "{duration}"', b) for b in (bg, fan))
    head = blocks[0]
    if cc == "powertcp":
        head = re.sub(r'(?m)^algorithm = "dcqcn"\n(preset = .*\n)?', 'algorithm = "powertcp"\n', head)
        # PowerTCP's INT adds 42 B to every data frame; keep frames at the 1500 B the
        # headroom formula assumes (with 1542 B frames SIH drops lossless packets).
        head, n = re.subn(r'(?m)^mtu = "1452B".*$', 'mtu = "1410B"                 # + 48 B of headers + 42 B of INT = 1500 B frames', head)
        if n != 1:
            sys.exit(f"{base}: expected one host mtu = \"1452B\" line")
    elif cc != "dcqcn":
        sys.exit(f"unknown cc {cc} (dcqcn or powertcp)")
    head = re.sub(r'(?m)^name = .*$', f'name = "dsh-paper-fig14-{cc}-l{load:g}"', head)
    sys.stdout.write("[[workload]]".join([head, bg, fan]))


def group(run, name):
    for g in run["by_workload"]:
        if g["workload"] == name:
            return g
    return {}


def points(out, ccs):
    rows = []
    for cc in ccs:
        for entry in sorted(os.listdir(out)):
            m = re.fullmatch(rf"{cc}-l([0-9.]+)", entry)
            path = os.path.join(out, entry, "compare.json")
            if not m or not os.path.exists(path):
                continue
            doc = json.load(open(path))
            for run in doc["runs"]:
                bg, fan = group(run, "workload[0]"), group(run, "workload[1]")
                rows.append({
                    "cc": cc, "load": float(m.group(1)), "scheme": run["scheme"],
                    "background_mean_fct_us": (bg.get("mean_fct_ns") or 0) / 1e3,
                    "background_norm": bg.get("mean_fct_norm"),
                    "fanin_mean_fct_us": (fan.get("mean_fct_ns") or 0) / 1e3,
                    "fanin_norm": fan.get("mean_fct_norm"),
                    "flows_finished": run["flows_finished"], "flows": run["flows"],
                    "queue_pauses": run["queue_pauses"], "port_pauses": run["port_pauses"],
                    "lossless_drops": run["lossless_drops"],
                    "drops": sum(run["drops"].values()) if isinstance(run["drops"], dict) else run["drops"],
                })
    rows.sort(key=lambda r: (r["cc"], r["load"], SCHEMES.index(r["scheme"])))
    return rows


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


def summary(out, ccs):
    rows = points(out, ccs)
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


def by_start(point, bin_ms=5.0):
    table = {}
    for scheme in SCHEMES:
        path = os.path.join(point, scheme, "flows.csv")
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
        sys.exit(f"{point}: no sih/flows.csv")
    print(f"{point}: mean FCT in us by start time (/ SIH)")
    print("| start, ms | kind | " + " | ".join(s.upper() for s in table) + " |")
    print("|---|---|" + "---|" * len(table))
    for (b, kind) in sorted(table["sih"]):
        base = table["sih"][(b, kind)]
        cells = [f"{t[(b, kind)]:.0f} ({t[(b, kind)] / base:.3f})" if (b, kind) in t else ""
                 for t in table.values()]
        print(f"| {b * bin_ms:g}-{(b + 1) * bin_ms:g} | {kind} | " + " | ".join(cells) + " |")


def queues(point):
    """Mean bytes in each egress port's queues over the samples, by tier of the port.

    A port's tier comes from the node at its other end (marks.csv names it): a switch with a
    host behind a port is a leaf."""
    print(f"{point}: mean bytes queued per egress port, KB (samples of queues.csv)")
    print("| scheme | leaf to spine | spine to leaf | leaf to host | samples |")
    print("|---|---|---|---|---|")
    for scheme in SCHEMES:
        run = os.path.join(point, scheme)
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
    if len(sys.argv) >= 6 and sys.argv[1] == "scenario":
        scenario(*sys.argv[2:6])
    elif len(sys.argv) >= 4 and sys.argv[1] == "summary":
        summary(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "by-start":
        by_start(sys.argv[2], *(float(a) for a in sys.argv[3:]))
    elif len(sys.argv) == 3 and sys.argv[1] == "queues":
        queues(sys.argv[2])
    else:
        sys.exit(__doc__)
