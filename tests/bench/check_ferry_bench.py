#!/usr/bin/env python3
"""Runs ferry-bench on one small cell per transport and checks what it writes.

Usage: check_ferry_bench.py FERRY_BENCH WORK_DIR

The bench is a command-line program whose JSON other tools read, so this test
runs it as a user does (real peer processes for ipc and tcp, a real host
store, gnuplot) and checks the output against bench/ferry_bench/README.md:
every selected row and its baselines (CAF as shipped and tuned) and limit
rows (socket, memcpy) are there, the figures agree with each other (ratio,
ratio_tuned, ratio_to_limit, MB/s, the median of the rounds), the plot is a
PNG, the JSON's targets are the checks the table prints and its command the
run's, and bad filters are refused with exit code 2 and a message naming the
bad value. A quick run of the tls cells (64 B and 1 MiB) checks the
tls-socket limit rows, the tls rows' ratio (over plain ferry tcp) and
ratio_to_limit (over tls-socket), and that the tls and tcp targets are
printed.
It checks no speed: targets are read from full runs, never from tests.
"""
import json
import math
import os
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def close(a, b, rel=1e-4):
    return math.isclose(a, b, rel_tol=rel, abs_tol=1e-9)


def run(bench, *args, timeout=200):
    try:
        return subprocess.run([bench, *args], capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, -1, "",
                                           f"timed out after {timeout} s")


def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def check_json(path, selected):
    with open(path) as f:
        doc = json.load(f)
    machine = doc.get("machine", {})
    for key in ("cpu", "cores", "memory_gib", "kernel", "compiler",
                "caf_version", "date", "mode", "wall_seconds", "command",
                "memcpy_us"):
        check(key in machine, f"machine block lacks {key}")
    check(machine.get("mode") == "full", "mode is not 'full' without --quick")
    check(float(machine.get("memcpy_us", {}).get("64", -1)) > 0,
          "memcpy_us has no positive figure for 64 bytes")
    check(doc.get("skipped") == [], f"cells skipped or failed: {doc.get('skipped')}")
    rows = {(r.get("transport"), r.get("family"), r.get("pattern")): r
            for r in doc.get("results", [])}
    fields = ("msgs_per_s", "mb_per_s", "p50_us", "p99_us",
              "baseline_msgs_per_s", "ratio", "receiver_peak_rss_mb")
    for tr, fam, pat in selected:
        key = (tr, fam, pat)
        if not check(key in rows, f"no row {key}"):
            continue
        r = rows[key]
        base = rows.get((tr, "raw-caf", pat))
        where = " ".join(key)
        if fam in ("socket", "memcpy"):
            # No actors: no CAF baseline, and memcpy has no receiver.
            bad = [f for f in fields[:4] if not number(r.get(f))]
            check(not bad, f"{where}: not numbers: {bad}")
            check(r.get("ratio") is None, f"{where}: a limit row has a ratio")
            check_tuned_and_limit(rows, key, r)
            continue
        bad = [f for f in fields if not number(r.get(f))]
        if not check(not bad, f"{where}: not numbers: {bad}"):
            continue
        if base is not None and not check(number(base.get("msgs_per_s"))
                                          and base["msgs_per_s"] > 0,
                                          f"{where}: baseline rate {base.get('msgs_per_s')}"):
            continue
        check(r["payload_type"] == "bytes" and r["payload_bytes"] == 64,
              f"{where}: wrong payload {r['payload_type']} {r['payload_bytes']}")
        check(r["msgs_per_s"] > 0, f"{where}: msgs_per_s {r['msgs_per_s']}")
        check(close(r["mb_per_s"], r["msgs_per_s"] * 64 / 1e6, 1e-3),
              f"{where}: mb_per_s {r['mb_per_s']} is not msgs_per_s * 64 B")
        check(0 < r["p50_us"] <= r["p99_us"],
              f"{where}: p50 {r['p50_us']} / p99 {r['p99_us']}")
        rss = r["receiver_peak_rss_mb"]
        check(rss is not None and rss > 0, f"{where}: receiver_peak_rss_mb {rss}")
        rounds = r.get("round_msgs_per_s", [])
        check(isinstance(rounds, list) and len(rounds) == 5
              and all(number(x) for x in rounds),
              f"{where}: round_msgs_per_s {rounds}, expected 5 rates")
        if isinstance(rounds, list) and len(rounds) == 5 \
                and all(number(x) for x in rounds):
            check(close(sorted(rounds)[len(rounds) // 2], r["msgs_per_s"]),
                  f"{where}: msgs_per_s is not the median of {rounds}")
        if check(base is not None, f"{where}: no baseline row"):
            check(close(r["baseline_msgs_per_s"], base["msgs_per_s"]),
                  f"{where}: baseline_msgs_per_s is not the baseline row's")
            check(close(r["ratio"], r["msgs_per_s"] / base["msgs_per_s"], 1e-3),
                  f"{where}: ratio {r['ratio']} is not msgs_per_s / baseline")
            if fam == "raw-caf":
                check(r["ratio"] == 1, f"{where}: baseline ratio {r['ratio']}")
        check_tuned_and_limit(rows, key, r)


def check_targets_json(path, stdout, args):
    """The JSON's command is the run's, and its targets are the checks the
    table printed, met and missed alike, in the same order."""
    with open(path) as f:
        doc = json.load(f)
    check(doc.get("machine", {}).get("command")
          == " ".join(["ferry-bench", *args]),
          f"machine.command is {doc.get('machine', {}).get('command')!r}")
    targets = doc.get("targets")
    if not check(isinstance(targets, list) and targets,
                 f"the JSON has no targets: {targets!r}"):
        return
    for t in targets:
        check(set(t) == {"what", "row", "figure", "met"}
              and isinstance(t.get("met"), bool),
              f"a target's fields: {t}")
    printed = stdout.split("\ntargets:\n", 1)[-1].split("\n\n", 1)[0]
    want = [f"  {'met   ' if t.get('met') else 'MISSED'}  {t.get('what')}: "
            f"{t.get('row')}: {t.get('figure')}" for t in targets]
    check(printed.splitlines() == want,
          f"the JSON's targets differ from the printed ones:\n{printed}\n"
          f"JSON:\n" + "\n".join(want))


def check_tuned_and_limit(rows, key, r):
    """ratio_tuned against the raw-caf-tuned row, ratio_to_limit against the
    socket (tcp) or memcpy (ipc) row of the same cell."""
    tr, fam, pat = key
    where = " ".join(key)
    if fam in ("socket", "memcpy"):
        check(r.get("ratio_tuned") is None and r.get("ratio_to_limit") is None,
              f"{where}: a limit row has ratios")
        return
    tuned = rows.get((tr, "raw-caf-tuned", pat))
    if check(tuned is not None, f"{where}: no raw-caf-tuned row"):
        check(number(r.get("tuned_msgs_per_s"))
              and close(r["tuned_msgs_per_s"], tuned["msgs_per_s"]),
              f"{where}: tuned_msgs_per_s {r.get('tuned_msgs_per_s')} is not "
              f"the raw-caf-tuned row's {tuned['msgs_per_s']}")
        check(number(r.get("ratio_tuned"))
              and close(r["ratio_tuned"],
                        r["msgs_per_s"] / tuned["msgs_per_s"], 1e-3),
              f"{where}: ratio_tuned {r.get('ratio_tuned')} is not msgs_per_s "
              "over the tuned row's")
    limit_family = {"tcp": "socket", "ipc": "memcpy"}.get(tr)
    if limit_family is None:
        check(r.get("ratio_to_limit") is None,
              f"{where}: ratio_to_limit without a limit row")
        return
    limit = rows.get((tr, limit_family, pat))
    if not check(limit is not None, f"{where}: no {limit_family} row"):
        return
    want = (r["msgs_per_s"] / limit["msgs_per_s"] if pat == "oneway"
            else limit["p50_us"] / r["p50_us"])
    check(number(r.get("ratio_to_limit"))
          and close(r["ratio_to_limit"], want, 1e-3),
          f"{where}: ratio_to_limit {r.get('ratio_to_limit')}, expected {want}")


def check_handoff(bench, work):
    """A hand-off row carries its p50, the resent p50 and the memcpy it is
    compared with."""
    js = os.path.join(work, "handoff.json")
    if os.path.exists(js):
        os.remove(js)
    res = run(bench, "--transport", "ipc", "--payload", "64M", "--pattern",
              "handoff", "--handoff-runs", "1", "--json", js)
    if not check(res.returncode == 0,
                 f"ferry-bench handoff exited {res.returncode}:\n"
                 f"{res.stderr[-3000:]}"):
        return
    with open(js) as f:
        rows = [r for r in json.load(f).get("results", [])
                if r.get("pattern") == "handoff"]
    if not check(len(rows) == 1, f"expected one hand-off row, got {len(rows)}"):
        return
    r = rows[0]
    for key in ("p50_us", "memcpy_us", "resend_p50_us", "small_p50_us",
                "small_resend_p50_us"):
        check(number(r.get(key)) and r[key] > 0,
              f"hand-off row: {key} is {r.get(key)}")
    check("ipc hand-off <= 1.5x memcpy" in res.stdout,
          "the hand-off target is not in the table")


def check_tls(bench, work):
    """A quick run of the tls cells: every tls row has its tls-socket limit
    row (transport tls, no ratios of its own) and its plain ferry tcp twin;
    its ratio is over the twin, its ratio_to_limit over the tls-socket row,
    and it has no ratio_tuned."""
    js = os.path.join(work, "tls.json")
    if os.path.exists(js):
        os.remove(js)
    res = run(bench, "--quick", "--transport", "tls", "--payload", "64,1M",
              "--pattern", "oneway,pingpong", "--seconds", "0.05",
              "--json", js)
    if not check(res.returncode == 0,
                 f"ferry-bench tls exited {res.returncode}:\n"
                 f"{res.stderr[-3000:]}"):
        return
    with open(js) as f:
        doc = json.load(f)
    check(doc.get("machine", {}).get("mode") == "quick",
          "the tls run's mode is not 'quick'")
    check(doc.get("skipped") == [],
          f"tls cells skipped or failed: {doc.get('skipped')}")
    rows = {(r.get("transport"), r.get("family"), r.get("payload_bytes"),
             r.get("pattern")): r for r in doc.get("results", [])}
    for size in (64, 1 << 20):
        for pat in ("oneway", "pingpong"):
            where = f"tls {size} B {pat}"
            limit = rows.get(("tls", "tls-socket", size, pat))
            row = rows.get(("tls", "cereal.binary", size, pat))
            plain = rows.get(("tcp", "cereal.binary", size, pat))
            if not (check(limit is not None, f"{where}: no tls-socket row")
                    and check(row is not None, f"{where}: no tls row")
                    and check(plain is not None,
                              f"{where}: no plain ferry tcp row")):
                continue
            check(rows.get(("tcp", "socket", size, pat)) is not None,
                  f"{where}: no socket row")
            bad = [k for k in ("msgs_per_s", "mb_per_s", "p50_us", "p99_us",
                               "receiver_peak_rss_mb")
                   if not (number(limit.get(k)) and limit[k] > 0)]
            check(not bad, f"{where}: tls-socket row lacks {bad}")
            check(limit.get("payload_type") == "bytes",
                  f"{where}: tls-socket row sends {limit.get('payload_type')}")
            check(all(limit.get(k) is None
                      for k in ("baseline_msgs_per_s", "ratio",
                                "tuned_msgs_per_s", "ratio_tuned",
                                "ratio_to_limit")),
                  f"{where}: the tls-socket row has ratios")
            rounds = limit.get("round_msgs_per_s", [])
            check(isinstance(rounds, list) and len(rounds) == 5,
                  f"{where}: tls-socket round_msgs_per_s {rounds}")
            if not check(number(row.get("msgs_per_s"))
                         and row["msgs_per_s"] > 0,
                         f"{where}: tls row rate {row.get('msgs_per_s')}"):
                continue
            check(number(row.get("baseline_msgs_per_s"))
                  and close(row["baseline_msgs_per_s"], plain["msgs_per_s"]),
                  f"{where}: baseline_msgs_per_s is not the plain tcp row's")
            check(number(row.get("ratio"))
                  and close(row["ratio"],
                            row["msgs_per_s"] / plain["msgs_per_s"], 1e-3),
                  f"{where}: ratio {row.get('ratio')} is not over plain tcp")
            check(row.get("ratio_tuned") is None,
                  f"{where}: a tls row has ratio_tuned {row.get('ratio_tuned')}")
            want = (row["msgs_per_s"] / limit["msgs_per_s"] if pat == "oneway"
                    else limit["p50_us"] / row["p50_us"])
            check(number(row.get("ratio_to_limit"))
                  and close(row["ratio_to_limit"], want, 1e-3),
                  f"{where}: ratio_to_limit {row.get('ratio_to_limit')}, "
                  f"expected {want} (over the tls-socket row)")
    for target in ("tls >= 1 MiB oneway, against the tls-socket limit",
                   "tls 64 B and 4 KiB, against plain ferry tcp",
                   "tcp >= 1 MiB oneway, against the socket limit"):
        check(target in res.stdout, f"the tls run prints no target {target!r}")
    check("(need >= 0.85)" in res.stdout,
          "no target prints its threshold 0.85 with both decimals")
    check("\n  tls-socket " in res.stdout, "the table has no tls-socket row")


def main():
    bench, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    js = os.path.join(work, "smoke.json")
    png = os.path.join(work, "smoke.png")
    for f in (js, png):
        if os.path.exists(f):
            os.remove(f)
    args = ["--transport", "inproc,ipc,tcp", "--payload", "64",
            "--pattern", "oneway,pingpong", "--family", "caf,ferry",
            "--type", "bytes", "--seconds", "0.05", "--json", js,
            "--plot", png]
    res = run(bench, *args)
    if not check(res.returncode == 0,
                 f"ferry-bench exited {res.returncode}:\n{res.stderr[-3000:]}"):
        return
    check("\ntargets:\n" in res.stdout, "the table lacks the targets")
    check("round 5/5" in res.stderr, "no progress line with the rounds on stderr")
    selected = [(tr, fam, pat)
                for tr, fam in (("inproc", "ferry"), ("ipc", "caf"),
                                ("tcp", "caf"))
                for pat in ("oneway", "pingpong")]
    selected += [(tr, base, pat) for tr in ("inproc", "ipc", "tcp")
                 for base in ("raw-caf", "raw-caf-tuned")
                 for pat in ("oneway", "pingpong")]
    selected += [(tr, fam, pat) for tr, fam in (("ipc", "memcpy"),
                                               ("tcp", "socket"))
                 for pat in ("oneway", "pingpong")]
    check_json(js, selected)
    check_targets_json(js, res.stdout, args)
    with open(png, "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "--plot did not write a PNG")
    check_handoff(bench, work)
    check_tls(bench, work)
    # --list: a refusal that regressed prints cells instead of running them.
    for args, name in ((["--payload", "3K"], "3K"),
                       (["--quick", "--payload", "64K"], "64 KiB"),
                       (["--transport", "udp"], "udp"),
                       (["--family", "nope"], "nope"),
                       (["--seconds", "0"], "--seconds must be positive"),
                       (["--rounds", "0"], "--rounds must be positive")):
        bad = run(bench, *args, "--list", timeout=30)
        first = (bad.stderr.splitlines() or [""])[0]
        check(bad.returncode == 2 and name in first,
              f"{' '.join(args)}: exit {bad.returncode}, first line of "
              f"stderr {first!r}")


if __name__ == "__main__":
    main()
    for f in failures:
        print("FAILED:", f)
    if failures:
        sys.exit(1)
    print("ferry-bench output checks passed")
