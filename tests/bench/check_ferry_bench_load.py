#!/usr/bin/env python3
"""Runs ferry-bench's load program and its Python rows small, and checks
what they write against bench/ferry_bench/README.md.

Usage: check_ferry_bench_load.py FERRY_BENCH WORK_DIR

`--load` with two low rates and short steps: every set (tcp and ipc; ferry
with caf and cereal.binary, raw-caf-tuned; the socket set) ran its steps
with real server and client processes, each with the server's CPU per
request, each step's figures agree with each other (requests
sent at the offered rate, answers at most what was sent, quantiles in
order), `held_rate` follows the README's rule from the steps, the table
names every set, the plot is a PNG and bad load options are refused. Then
`--family python`: both Python rows are there, measured or with a reason.
It checks no speed.
"""
import json
import os
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def run(bench, *args, timeout=300):
    return subprocess.run([bench, *args], capture_output=True, text=True,
                          timeout=timeout)


def number_or_none(x):
    return x is None or isinstance(x, (int, float))


def held(step):
    return (step["errors"] == 0 and step["sent"] > 0
            and step["ok"] >= 0.95 * step["sent"]
            and step["p99_us"] <= 10000)


def check_load(bench, work):
    js = os.path.join(work, "load.json")
    png = os.path.join(work, "load.png")
    rates = [300, 600]
    res = run(bench, "--load", "--quick", "--load-rates", "300,600",
              "--load-step-seconds", "0.4", "--load-clients", "2",
              "--json", js, "--plot", png)
    if not check(res.returncode == 0,
                  f"--load exit {res.returncode}: {res.stderr[-2000:]}"):
        return
    with open(js) as f:
        doc = json.load(f)
    sets = doc.get("load", [])
    kinds = sorted((s["transport"], s["system"], s["family"]) for s in sets)
    check(kinds == sorted([("tcp", "socket", "")]
                          + [(tr, sy, fa) for tr in ("tcp", "ipc")
                             for sy, fa in (("ferry", "caf"),
                                            ("ferry", "cereal.binary"),
                                            ("raw-caf-tuned", ""))]),
          f"load sets {kinds}")
    for s in sets:
        label = f"{s['transport']} {s['system']} {s['family']}"
        if not check("error" not in s, f"{label}: {s.get('error')}"):
            continue
        check(s["clients"] == 2, f"{label}: clients {s['clients']}")
        offered = [st["offered"] for st in s["steps"]]
        # The given rates, and 10 % steps between a rate held and the next
        # given one that was not.
        given = [x for x in offered if x in rates]
        between = [x for x in offered if x not in rates]
        check(given == rates[:len(given)] and given,
              f"{label}: steps at {offered}")
        check(all(rates[0] < x < rates[-1] for x in between),
              f"{label}: refining steps outside the ladder: {offered}")
        check(offered == sorted(offered), f"{label}: steps out of order")
        check(all(number_or_none(st.get("server_cpu_us")) for st in s["steps"]),
              f"{label}: a step without server_cpu_us")
        for st in s["steps"]:
            expect = st["offered"] * 0.4
            check(abs(st["sent"] - expect) <= 2,
                  f"{label} {st['offered']}/s: {st['sent']} sent, "
                  f"{expect} scheduled")
            check(st["ok"] + st["errors"] <= st["sent"],
                  f"{label}: more answers than requests")
            check(st["p50_us"] <= st["p99_us"] <= st["p999_us"]
                  <= st["max_us"] * 1.02 + 1,
                  f"{label}: quantiles out of order {st}")
        best = max([st["offered"] for st in s["steps"] if held(st)],
                   default=0)
        check(s["held_rate"] == best,
              f"{label}: held_rate {s['held_rate']}, steps say {best}")
        check(f"{s['transport']} {s['system']}" in res.stdout,
              f"{label}: not in the table")
    with open(png, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "--plot wrote no PNG")
    for args, name in ((["--load-clients", "0"], "--load-clients"),
                       (["--load-rates", "x"], "--load-rates"),
                       (["--load-step-seconds", "0"], "--load-step-seconds")):
        bad = run(bench, "--load", *args, timeout=30)
        first = (bad.stderr.splitlines() or [""])[0]
        check(bad.returncode == 2 and name in first,
              f"{' '.join(args)}: exit {bad.returncode}, {first!r}")


def check_python(bench, work):
    js = os.path.join(work, "python.json")
    res = run(bench, "--quick", "--family", "python", "--json", js)
    if not check(res.returncode == 0,
                 f"--family python exit {res.returncode}: "
                 f"{res.stderr[-2000:]}"):
        return
    with open(js) as f:
        rows = json.load(f).get("python", [])
    check(sorted(r["client"] for r in rows)
          == ["python-ferry", "python-socket"], f"python rows {rows}")
    for r in rows:
        if "error" in r:
            check(r["error"], f"{r['client']}: an empty reason")
            continue
        check(r["msgs_per_s"] > 0 and r["p50_us"] <= r["p99_us"],
              f"{r['client']}: figures {r}")
        check(len(r["round_msgs_per_s"]) == 5, f"{r['client']}: rounds")
    socket = [r for r in rows if r["client"] == "python-socket"
              and "error" not in r]
    if socket:
        check(abs(socket[0]["ratio_to_socket"] - 1) < 1e-6,
              "python-socket's ratio_to_socket is not 1")


def main():
    bench, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    check_load(bench, work)
    check_python(bench, work)


if __name__ == "__main__":
    main()
    for f in failures:
        print("FAILED:", f)
    if failures:
        sys.exit(1)
    print("ferry-bench load and Python checks passed")
