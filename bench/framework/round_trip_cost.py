#!/usr/bin/env python3
"""Instructions and allocations per round trip between two processes.

Usage: round_trip_cost.py FERRY_ROUND_TRIP_COST [--round-trips K]
           [--size B[,B]] [--impl I[,I]] [--family F] [--json FILE]
           [--no-valgrind]

For each implementation (raw-caf: CAF's defaults; raw-caf-tuned: CAF given a
ferry node's scheduler settings and the middleman settings of
bench/support/ferry_caf_settings.hpp; ferry: two ferry nodes of one
host, family F) and payload size, starts the server and the client of
ferry_round_trip_cost (round_trip_cost.cpp), each under
`valgrind --tool=callgrind`, and reads each side's counters over the K
measured round trips: callgrind's Ir (instructions) from the dump the
program triggers at the end of its window, and the `operator new` calls the
program counts itself. Prints (and with --json writes) per round trip:
client, server and both together. Exits 1 when a run fails or a figure is
missing. --no-valgrind counts allocations only (instructions null).
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

VALGRIND = "/usr/bin/valgrind"


def callgrind(out_file):
    return [VALGRIND, "--tool=callgrind", "--quiet",
            f"--callgrind-out-file={out_file}"]


def total_ir(prefix):
    """Returns the Ir total of the dump the program triggered (prefix.1)."""
    dumps = sorted(glob.glob(prefix + ".*"))
    if not dumps:
        return None
    with open(dumps[0]) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    return None


def measure(binary, impl, family, size, round_trips, work, use_valgrind):
    tag = f"{impl}-{size}"
    server_out = os.path.join(work, f"server-{tag}.out")
    client_out = os.path.join(work, f"client-{tag}.out")
    wrap = callgrind if use_valgrind else (lambda _: [])
    server = subprocess.Popen(
        wrap(server_out) + [binary, "--serve", f"--impl={impl}",
                            f"--family={family}"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        first = server.stdout.readline().split()
        if len(first) != 4 or first[0] != "port":
            raise RuntimeError(f"{tag}: the server did not start: {first}")
        client = subprocess.run(
            wrap(client_out) + [binary, f"--connect={first[1]}",
                                f"--store={first[3]}", f"--impl={impl}",
                                f"--family={family}", f"--size={size}",
                                f"--round-trips={round_trips}"],
            capture_output=True, text=True, timeout=600)
        if client.returncode != 0:
            raise RuntimeError(f"{tag}: the client exited "
                               f"{client.returncode}: {client.stderr[-2000:]}")
        figures = json.loads(client.stdout.strip().splitlines()[-1])
    finally:
        server.stdin.close()
        server.wait(timeout=120)
    n = figures["round_trips"]
    row = {"impl": impl, "family": figures["family"], "payload_bytes": size,
           "round_trips": n}
    allocs = {"client": round(figures["client_allocations"] / n, 2),
              "server": round(figures["server_allocations"] / n, 2)}
    row["client_allocations_per_round_trip"] = allocs["client"]
    row["server_allocations_per_round_trip"] = allocs["server"]
    row["allocations_per_round_trip"] = round(
        allocs["client"] + allocs["server"], 2)
    if use_valgrind:
        ir = {side: total_ir(out) for side, out in
              (("client", client_out), ("server", server_out))}
        for side, value in ir.items():
            if value is None:
                raise RuntimeError(f"{tag}: no callgrind dump of the {side}")
        row["client_ir_per_round_trip"] = round(ir["client"] / n)
        row["server_ir_per_round_trip"] = round(ir["server"] / n)
        row["ir_per_round_trip"] = round((ir["client"] + ir["server"]) / n)
    else:
        row["client_ir_per_round_trip"] = None
        row["server_ir_per_round_trip"] = None
        row["ir_per_round_trip"] = None
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("--round-trips", type=int, default=1000)
    ap.add_argument("--size", default="64,4096")
    ap.add_argument("--impl", default="raw-caf,raw-caf-tuned,ferry")
    ap.add_argument("--family", default="cereal.binary")
    ap.add_argument("--json")
    ap.add_argument("--no-valgrind", action="store_true")
    args = ap.parse_args()
    use_valgrind = not args.no_valgrind
    if use_valgrind and not os.access(VALGRIND, os.X_OK):
        print(f"round_trip_cost: {VALGRIND} is missing", file=sys.stderr)
        return 1
    rows = []
    with tempfile.TemporaryDirectory(prefix="ferry-round-trip-cost-") as work:
        for size in (int(x) for x in args.size.split(",")):
            for impl in args.impl.split(","):
                try:
                    row = measure(args.binary, impl, args.family, size,
                                  args.round_trips, work, use_valgrind)
                except (RuntimeError, subprocess.TimeoutExpired,
                        ValueError, IndexError) as e:
                    print(f"round_trip_cost: {e}", file=sys.stderr)
                    return 1
                rows.append(row)
                print(json.dumps(row), flush=True)
    bad = [r for r in rows if not r["allocations_per_round_trip"] > 0
           or (use_valgrind and not r["ir_per_round_trip"] > 0)]
    if bad:
        print(f"round_trip_cost: figures missing: {bad}", file=sys.stderr)
        return 1
    doc = {"valgrind": use_valgrind, "round_trips": args.round_trips,
           "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
