#!/usr/bin/env python3
"""Instructions per line of the project's source, through every inlined call.

`callgrind_annotate` charges an instruction to the innermost source line of its inline
chain, which for most of a hot Rust function is a line of the standard library (a slice's
bounds check, `Vec`'s deref, an integer method), and it cannot show those files without the
library's sources. This script charges each instruction to the innermost line of the
project instead (found with `addr2line -i`), so that `ports[port]` or `arena.get(pkt)`
shows what it costs where it is written.

    valgrind --tool=callgrind --dump-instr=yes --callgrind-out-file=cg.out \\
        target/release/headroom bench --threads 1
    scripts/callgrind-lines.py cg.out target/release/headroom [--function send_next]
        [--through port_table.rs,packet.rs] [--only port_table.rs] [--top 40]

--function  count only the self cost of functions whose name contains this
--through   treat these project files as library: charge their lines to their callers
            (e.g. to see which call sites pay for the port table's index)
--only      count only instructions with a frame in this file in their chain
--top       rows to print

Prints the project lines by instructions, then the library lines by the project line that
reached them. Reads the callgrind file's `positions: instr line` records (costs after a
`calls=` line are the call's inclusive cost and are skipped).
"""
import argparse
import collections
import re
import subprocess
import sys

PROJECT_ROOT_MARK = "/crates/"


def self_costs(path, function):
    """Self cost (first event, Ir) per instruction address."""
    names = {}
    cost = collections.Counter()
    current = ""
    addr = line = 0
    skip_call_cost = False

    def position(token, previous):
        if token == "*":
            return previous
        if token[0] in "+-":
            return previous + int(token, 0)
        return int(token, 0)

    with open(path) as f:
        for raw in f:
            if raw.startswith(("fn=", "cfn=")):
                m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", raw.rstrip("\n"))
                if m and m.group(2):
                    names[m.group(1)] = m.group(2)
                if raw.startswith("fn=") and m:
                    current = names.get(m.group(1), "")
                continue
            if raw.startswith("calls="):
                skip_call_cost = True
                continue
            if not raw or raw[0] not in "0123456789+-*":
                continue
            parts = raw.split()
            addr = position(parts[0], addr)
            if len(parts) > 1:
                line = position(parts[1], line)
            if skip_call_cost:
                skip_call_cost = False
                continue
            if len(parts) > 2 and (function is None or function in current):
                cost[addr] += int(parts[2])
    return cost


def inline_chains(binary, addrs):
    """addr2line -i for each address: its frames, innermost first."""
    out = subprocess.run(
        ["addr2line", "-a", "-i", "-e", binary] + [hex(a) for a in addrs],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    chains, current = {}, None
    for text in out.splitlines():
        if text.startswith("0x"):
            current = int(text, 16)
            chains[current] = []
        elif text and current is not None:
            chains[current].append(text.split(" ")[0])
    return chains


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("callgrind_out")
    ap.add_argument("binary")
    ap.add_argument("--function")
    ap.add_argument("--through", default="")
    ap.add_argument("--only")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--addresses", type=int, default=5000,
                    help="most expensive addresses to resolve")
    args = ap.parse_args()
    through = [t for t in args.through.split(",") if t]

    cost = self_costs(args.callgrind_out, args.function)
    total = sum(cost.values())
    addrs = [a for a, _ in cost.most_common(args.addresses)]
    chains = inline_chains(args.binary, addrs)
    by_line = collections.Counter()
    by_library = collections.Counter()
    for a in addrs:
        frames = chains.get(a, [])
        if args.only and not any(args.only in f for f in frames):
            continue
        ours = next(
            (f for f in frames
             if PROJECT_ROOT_MARK in f and "/rustc/" not in f
             and not any(t in f for t in through)),
            "?",
        )
        by_line[ours] += cost[a]
        if frames and "/rustc/" in frames[0]:
            by_library[(ours, frames[0].split("/library/")[-1])] += cost[a]
    resolved = sum(cost[a] for a in addrs)
    print(f"instructions counted: {total:,} ({resolved:,} at the {len(addrs)} "
          f"most expensive addresses)")
    for where, n in by_line.most_common(args.top):
        print(f"{n:>15,}  {where}")
    print("--- library lines, by the project line that reached them")
    for (where, lib), n in by_library.most_common(args.top):
        print(f"{n:>15,}  {where}  <- {lib}")


if __name__ == "__main__":
    sys.exit(main())
