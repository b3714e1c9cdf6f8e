#!/usr/bin/env python3
"""Writes a Markdown page of ferry-bench figures from the runs' JSON files.

Usage: report.py OUT.md RUN.json [RUN.json ...]

Every figure on the page comes from the JSON files named on the command line
(ferry-bench --json FILE, README.md here, "Reading the output"), so a page
is regenerated, never edited: its header says so and gives the command.
The page lists, for each run, the machine and the command that produced it;
then, per mode with more than one run, how far the same row's rate moved
between its runs; then, per mode (quick, full), every target ferry-bench
checked with the range of its figure over the rows and runs it applies to and
how many rows met it;
then the ratios of ferry's rows (ratio, ratio_tuned, ratio_to_limit) per
transport, pattern, size class and payload type; then the hand-off and
broadcast rows. The same inputs give the same page, byte for byte.

Python 3 standard library only; the text helpers are in report_format.py.
"""
import json
import os
import sys

from report_format import (cell, fmt, number, order_of, parse_figure, plural,
                           size_class, size_label, span, text_span, wrap_prose)

USAGE = "usage: report.py OUT.md RUN.json [RUN.json ...]"

# Rows that are references, not ferry: the CAF baselines and the limits.
REFERENCE_FAMILIES = ("raw-caf", "raw-caf-tuned", "socket", "tls-socket",
                      "memcpy")
TRANSPORT_ORDER = ("inproc", "ipc", "tcp", "tls", "netns")
PATTERN_ORDER = ("oneway", "pingpong", "handoff", "broadcast")
TYPE_ORDER = ("bytes", "record", "shared_array")
MODE_ORDER = ("quick", "full")


class Run:
    """One JSON file of ferry-bench."""

    def __init__(self, index, path):
        self.index = index
        self.path = path
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            raise SystemExit(f"report.py: cannot read {path}: {e}")
        if not isinstance(doc, dict) or not isinstance(doc.get("machine"),
                                                       dict):
            raise SystemExit(f"report.py: {path} is not ferry-bench JSON "
                             "(no machine block)")
        self.machine = doc["machine"]
        self.mode = str(self.machine.get("mode", "unknown"))
        self.results = [r for r in doc.get("results", [])
                        if isinstance(r, dict)]
        self.skipped = [s for s in doc.get("skipped", [])
                        if isinstance(s, dict)]
        self.python = [p for p in doc.get("python", []) or []
                       if isinstance(p, dict)]
        self.load = [x for x in doc.get("load", []) or []
                     if isinstance(x, dict)]
        self.entities = [x for x in doc.get("entities", []) or []
                         if isinstance(x, dict)]
        # None: a run written before ferry-bench recorded its checks.
        targets = doc.get("targets")
        self.targets = ([t for t in targets if isinstance(t, dict)]
                        if isinstance(targets, list) else None)

    def failed(self):
        return [s for s in self.skipped
                if str(s.get("reason", "")).startswith("failed:")]


def machine_line(m):
    memory = m.get("memory_gib")
    memory = f"{memory:.1f} GiB" if number(memory) else "? GiB"
    return f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores, {memory}"


def runs_section(runs):
    out = ["## Runs", "",
           "| run | mode | machine | kernel | compiler | CAF | date "
           "| wall time | targets met | command |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        m = r.machine
        wall = m.get("wall_seconds")
        wall = f"{wall:,.0f} s" if number(wall) else "?"
        if r.targets is None:
            met = "not recorded"
        else:
            met = f"{sum(1 for t in r.targets if t.get('met') is True)} " \
                  f"of {len(r.targets)}"
            bound = sum(1 for t in r.targets if t.get("bound"))
            if bound:
                met += f" ({bound} bound by the machine)"
        command = m.get("command")
        command = f"`{command}`" if command else "not recorded"
        out.append(
            f"| {r.index} (`{cell(os.path.basename(r.path))}`) | {cell(r.mode)} "
            f"| {cell(machine_line(m))} | {cell(m.get('kernel', '?'))} "
            f"| {cell(m.get('compiler', '?'))} "
            f"| {cell(m.get('caf_version', '?'))} | {cell(m.get('date', '?'))} "
            f"| {wall} | {met} | {cell(command)} |")
    out.append("")
    notes = []
    for r in runs:
        rows = len(r.results)
        skipped = len(r.skipped) - len(r.failed())
        text = (f"Run {r.index}: {plural(rows, 'row')}, "
                f"{plural(skipped, 'cell')} skipped by design")
        failed = r.failed()
        if failed:
            text += f", {len(failed)} failed: " + "; ".join(
                f"{s.get('cell', '?')} ({s.get('reason', '')[8:].strip()})"
                for s in failed)
        notes.append(text + ".")
    out += [" ".join(notes), ""]
    for mode in modes_of(runs):
        spread = spread_note(mode, [r for r in runs
                                    if r.mode == mode and r.results])
        if spread:
            out += [spread, ""]
    return out


def row_label(x):
    """A result row as 'transport family type size pattern[, link]'."""
    size = x.get("payload_bytes")
    label = (f"{x.get('transport', '?')} {x.get('family', '?')} "
             f"{x.get('payload_type', '?')} "
             f"{size_label(size if isinstance(size, int) else 0)} "
             f"{x.get('pattern', '?')}")
    link = x.get("host_link_mbit")
    if isinstance(link, int) and link:
        label += f", links of {link:,} Mbit/s"
    return label


def spread_note(mode, runs):
    """How far the same row's msgs_per_s moved between the runs of a mode,
    every row (references included) that more than one of them measured;
    None where fewer than two runs share a row."""
    if len(runs) < 2:
        return None
    by_row = {}
    for r in runs:
        for x in r.results:
            rate = x.get("msgs_per_s")
            if not number(rate) or rate <= 0:
                continue
            # One rate per run and row: the first, should a run repeat it.
            by_row.setdefault(row_label(x), {}).setdefault(r.index, rate)
    spreads = sorted((max(v.values()) / min(v.values()), label)
                     for label, v in by_row.items() if len(v) > 1)
    if not spreads:
        return None
    values = [s for s, _ in spreads]
    middle = len(values) // 2
    median = values[middle] if len(values) % 2 else \
        (values[middle - 1] + values[middle]) / 2
    largest, label = spreads[-1]
    return (f"Between the {mode} runs ({run_list(runs)}), "
            f"{plural(len(spreads), 'row')} measured in more than one: a "
            "row's `msgs_per_s` in its fastest run over its slowest, median "
            f"{fmt(median)}, largest {fmt(largest)} ({cell(label)}).")


def modes_of(runs):
    modes = []
    for r in runs:
        if r.mode not in modes:
            modes.append(r.mode)
    return sorted(modes, key=lambda m: order_of(m, MODE_ORDER))


def run_list(runs):
    numbers = [str(r.index) for r in runs]
    word = "run" if len(numbers) == 1 else "runs"
    return f"{word} {', '.join(numbers)}"


def targets_section(mode, runs):
    recorded = [r for r in runs if r.targets is not None]
    out = [f"## Targets, {mode} mode", ""]
    if not recorded:
        return out + [f"The {mode} runs ({run_list(runs)}) recorded no "
                      "target checks.", ""]
    out += [f"Every target ferry-bench checked in the {mode} runs "
            f"({run_list(recorded)}): the figure it reads, its threshold, "
            "the range of the figure per transport over every row and run "
            "it applies to, and how many of those rows met it. A row that "
            "failed counts as missed.", "",
            "| target | figure | need | range | met |",
            "|---|---|---|---|---|"]
    # By target, in the order ferry-bench checks them (first seen first).
    by_what = {}
    for r in recorded:
        for t in r.targets:
            by_what.setdefault(str(t.get("what", "?")), []).append(t)
    for what, checks in by_what.items():
        names, needs, per_transport = [], [], {}
        failed = 0
        for t in checks:
            parsed = parse_figure(str(t.get("figure", "")))
            transport = str(t.get("row", "?")).split(" ")[0]
            per_transport.setdefault(transport, [])
            if parsed is None:
                failed += 1
                continue
            name, value, need = parsed
            if name not in names:
                names.append(name)
            if need and need not in needs:
                needs.append(need)
            per_transport[transport].append(value)
        transports = sorted(per_transport,
                            key=lambda x: order_of(x, TRANSPORT_ORDER))
        ranges = "; ".join(f"{tr} {text_span(per_transport[tr])}"
                           for tr in transports)
        met = sum(1 for t in checks if t.get("met") is True)
        count = f"{met} of {len(checks)}"
        bound = sorted({str(t["bound"]) for t in checks if t.get("bound")})
        if bound:
            count += (f" ({sum(1 for t in checks if t.get('bound'))} bound "
                      f"by the machine: {', '.join(bound)})")
        if failed:
            count += f" ({failed} without a figure)"
        out.append(f"| {cell(what)} | {cell(', '.join(names) or '—')} "
                   f"| {cell(', '.join(needs) or '—')} | {cell(ranges)} "
                   f"| {count} |")
    out.append("")
    return out


def ferry_rows(runs, patterns):
    for r in runs:
        for x in r.results:
            if x.get("family") in REFERENCE_FAMILIES:
                continue
            if x.get("pattern") in patterns:
                yield x


def ratios_section(mode, runs):
    out = [f"## Ratios, {mode} mode", ""]
    groups = {}
    for x in ferry_rows(runs, ("oneway", "pingpong")):
        size = x.get("payload_bytes")
        size = size if isinstance(size, int) else 0
        type_ = str(x.get("payload_type", "?"))
        if str(x.get("family", "")).endswith("+metrics"):
            type_ += " (+metrics)"
        key = (str(x.get("transport", "?")), str(x.get("pattern", "?")),
               size_class(size), type_)
        groups.setdefault(key, []).append(x)
    if not groups:
        return out + [f"The {mode} runs have no oneway or pingpong rows of "
                      "ferry.", ""]
    out += [f"ferry's oneway and pingpong rows of the {mode} runs "
            f"({run_list(runs)}), every family, by transport, pattern, size "
            "class and payload type: the range of each ratio over the rows "
            "and runs (— where the rows have none).", "",
            "| transport | pattern | size | payload | rows | ratio "
            "| ratio_tuned | ratio_to_limit |",
            "|---|---|---|---|---|---|---|---|"]

    def key_order(key):
        tr, pat, (size_index, _), type_ = key
        return (order_of(tr, TRANSPORT_ORDER), order_of(pat, PATTERN_ORDER),
                size_index, order_of(type_.split(" ")[0], TYPE_ORDER), type_)

    for key in sorted(groups, key=key_order):
        tr, pat, (_, size), type_ = key
        rows = groups[key]
        out.append(
            f"| {cell(tr)} | {cell(pat)} | {size} | {cell(type_)} "
            f"| {len(rows)} | {span(x.get('ratio') for x in rows)} "
            f"| {span(x.get('ratio_tuned') for x in rows)} "
            f"| {span(x.get('ratio_to_limit') for x in rows)} |")
    out.append("")
    return out


def one_shot_section(mode, runs):
    groups = {}
    for x in ferry_rows(runs, ("handoff", "broadcast")):
        size = x.get("payload_bytes")
        size = size if isinstance(size, int) else 0
        link = x.get("host_link_mbit")
        key = (str(x.get("transport", "?")), str(x.get("pattern", "?")), size,
               str(x.get("family", "?")), str(x.get("payload_type", "?")),
               link if isinstance(link, int) else 0)
        groups.setdefault(key, []).append(x)
    if not groups:
        return []
    out = [f"## Hand-offs and broadcasts, {mode} mode", "",
           "Medians of each row's timed runs (µs); a hand-off beside a 64 B "
           "message sent the same way after the same quiet and a warm "
           "memcpy of its size, a broadcast to three nodes beside one "
           "transfer.", "",
           "| row | rows | p50 µs | beside it |", "|---|---|---|---|"]

    def key_order(key):
        tr, pat, size, family, type_, link = key
        return (order_of(tr, TRANSPORT_ORDER), order_of(pat, PATTERN_ORDER),
                size, family, type_, link)

    for key in sorted(groups, key=key_order):
        tr, pat, size, family, type_, link = key
        rows = groups[key]
        values = lambda name: [x.get(name) for x in rows]
        if pat == "handoff":
            beside = (f"64 B {span(values('small_p50_us'))} µs; resent at "
                      f"once {span(values('resend_p50_us'))} µs; memcpy "
                      f"{span(values('memcpy_us'))} µs")
        else:
            beside = (f"to one {span(values('single_p50_us'))} µs; "
                      f"broadcast_ratio {span(values('broadcast_ratio'))}, "
                      f"cpu_ratio {span(values('cpu_ratio'))}, cores_busy "
                      f"{span(values('cores_busy'))}, owner_copies "
                      f"{span(values('owner_copies'))}")
        label = f"{tr} {family} {type_} {size_label(size)} {pat}"
        if link:
            label += f", links of {link:,} Mbit/s"
        out.append(f"| {cell(label)} | {len(rows)} "
                   f"| {span(values('p50_us'))} | {cell(beside)} |")
    out.append("")
    return out


def python_section(mode, runs):
    rows = {}
    for run in runs:
        for x in run.python:
            rows.setdefault(str(x.get("client", "?")), []).append(x)
    if not rows:
        return []
    out = [f"## Python round trips, {mode} mode", "",
           "A sanity figure, not a target: 64 B round trips from Python "
           "(Debian's python3, one thread) over loopback, through the "
           "Python peer (`framework/python/ferry`, family msgpack) to a "
           "ferry node's actor, and through Python's own `socket` module to "
           "the socket limit's peer; medians of each run's rounds.", "",
           "| client | runs | round trips/s | p50 µs | p99 µs "
           "| over the Python socket |", "|---|---|---|---|---|---|"]
    for client in sorted(rows):
        got = [x for x in rows[client] if "error" not in x]
        failed = [str(x["error"]) for x in rows[client] if "error" in x]
        values = lambda name: [x.get(name) for x in got]
        if got:
            out.append(f"| {client} | {len(got)} "
                       f"| {span(values('msgs_per_s'))} "
                       f"| {span(values('p50_us'))} "
                       f"| {span(values('p99_us'))} "
                       f"| {span(values('ratio_to_socket'))} |")
        for why in sorted(set(failed)):
            out.append(f"| {client} | not measured | {cell(why)} | | | |")
    out.append("")
    return out


LOAD_PLOT = "load-latency.png"


def load_section(mode, runs, page_dir="."):
    sets = {}
    for run in runs:
        caf = {str(x.get("transport")): x.get("held_rate")
               for x in run.load if x.get("system") == "raw-caf-tuned"}
        sock = [x.get("held_rate") for x in run.load
                if x.get("system") == "socket" and not x.get("error")]
        for x in run.load:
            key = (str(x.get("transport", "?")), str(x.get("system", "?")),
                   str(x.get("family", "")))
            row = dict(x)
            base = caf.get(key[0])
            held = x.get("held_rate")
            row["over_caf"] = (held / base if number(held) and number(base)
                               and base > 0 else None)
            row["over_socket"] = (held / sock[0] if sock and number(held)
                                  and number(sock[0]) and sock[0] > 0
                                  else None)
            sets.setdefault(key, []).append(row)
    if not sets:
        return []
    out = [f"## Load: the rate a service holds, {mode} mode", "",
           "`ferry-bench --load`: one server process answering 64 B "
           "requests, client processes requesting it on a fixed schedule "
           "(open loop), the offered rate stepped up; `held` is the highest "
           "offered rate (requests a second, all clients) whose step kept "
           "p99 at or below 10 ms from each request's scheduled time, with "
           "no error; `over CAF` divides it by raw-caf-tuned's in the same "
           "run (CAF has no same-host path: its ipc set runs over loopback "
           "TCP), `over socket` by the `socket` set's (an epoll server and "
           "the same clients on plain sockets, the machine's limit); `CPU` "
           "is the server process's CPU time per answered request at the "
           "rate held.", "",
           "| transport | system | runs | held requests/s | over CAF "
           "| over socket | p99 at the highest step held (µs) "
           "| CPU (µs/request) |",
           "|---|---|---|---|---|---|---|---|"]
    for key in sorted(sets, key=lambda k: (order_of(k[0], TRANSPORT_ORDER),
                                           k[1] != "ferry", k[2])):
        rows = sets[key]
        failed = sorted({str(x["error"]) for x in rows if x.get("error")})
        got = [x for x in rows if not x.get("error")]
        label = key[1] + (f" {key[2]}" if key[2] else "")
        p99 = []
        cpu = []
        for x in got:
            held = [s for s in x.get("steps", [])
                    if s.get("offered") == x.get("held_rate")]
            p99 += [s.get("p99_us") for s in held]
            cpu += [s.get("server_cpu_us") for s in held
                    if number(s.get("server_cpu_us"))
                    and s.get("server_cpu_us") >= 0]
        if got:
            out.append(f"| {key[0]} | {cell(label)} | {len(got)} "
                       f"| {span([x.get('held_rate') for x in got])} "
                       f"| {span([x.get('over_caf') for x in got])} "
                       f"| {span([x.get('over_socket') for x in got])} "
                       f"| {span(p99)} | {span(cpu)} |")
        for why in failed:
            out.append(f"| {key[0]} | {cell(label)} | failed "
                       f"| {cell(why)} | | | | |")
    out.append("")
    # The picture ferry-bench drew with --plot, where a run of this mode did.
    drew = [r for r in runs if LOAD_PLOT in str(r.machine.get("command"))]
    if drew and os.path.exists(os.path.join(page_dir, LOAD_PLOT)):
        out += [f"p99 latency against the offered rate, run {drew[0].index} "
                f"(`{drew[0].machine.get('command')}`):", "",
                f"![p99 latency against offered rate]({LOAD_PLOT})", ""]
    return out


ENTITY_ORDER = ["round_trip", "activation", "throughput", "rebalance"]
STORE_ORDER = ["none", "sqlite", "postgresql"]


def entities_section(mode, runs):
    rows = {}
    for run in runs:
        for x in run.entities:
            key = (str(x.get("what", "?")), str(x.get("store", "?")),
                   str(x.get("figure", "")))
            rows.setdefault(key, []).append(x)
    if not rows:
        return []
    out = [f"## Entities, {mode} mode", "",
           "`ferry-bench --entities`: nodes of one cluster in one process, "
           "linked over loopback TCP; a client node that hosts no entities "
           "asks members that do. `round_trip`: 64 B requests one after the "
           "other to an active entity without state, beside a plain actor "
           "exposed on the same member (`plain`; `ratio` is the entity's "
           "rate over the plain actor's). `activation`: the first request "
           "to each of 1,000 new keys, which load their state first. "
           "`throughput`: requests a second to the run's keys with 256 in "
           "flight, while they activate and once active; with SQLite and "
           "PostgreSQL each request saves the entity's state (SQLite in WAL "
           "mode, `synchronous=NORMAL`; PostgreSQL is a throwaway server "
           "the run starts, with `fsync=off`). `rebalance`: the run's keys "
           "active on four hosting members, then a fifth joins: seconds "
           "from its start until the shards settled, and until every key "
           "answered again.", "",
           "| what | store | figure | runs | value | plain | ratio |",
           "|---|---|---|---|---|---|---|"]
    for key in sorted(rows, key=lambda k: (order_of(k[0], ENTITY_ORDER),
                                           order_of(k[1], STORE_ORDER),
                                           k[2])):
        got = [x for x in rows[key] if not x.get("error")]
        failed = sorted({str(x["error"]) for x in rows[key]
                         if x.get("error")})
        if got:
            base = [x.get("baseline") for x in got
                    if number(x.get("baseline"))]
            ratio = [x["baseline"] / x["value"] for x in got
                     if number(x.get("baseline")) and number(x.get("value"))
                     and x["value"] > 0]
            out.append(f"| {key[0]} | {key[1]} | {cell(key[2])} "
                       f"| {len(got)} | {span([x.get('value') for x in got])} "
                       f"| {span(base) if base else ''} "
                       f"| {span(ratio) if ratio else ''} |")
        for why in failed:
            out.append(f"| {key[0]} | {key[1]} | failed | {cell(why)} "
                       f"| | | |")
    out.append("")
    return out


def header(out_path, paths):
    here = os.path.dirname(os.path.abspath(__file__))
    page_dir = os.path.dirname(os.path.abspath(out_path))
    readme = os.path.relpath(os.path.join(here, "README.md"), page_dir)
    command = " ".join(["python3 bench/ferry_bench/report.py", out_path,
                        *paths])
    files = ("JSON file " if len(paths) == 1 else "JSON files ") + ", ".join(
        f"`{p}`" for p in paths)
    return [
        "# ferry performance", "",
        "<!-- Generated by bench/ferry_bench/report.py; do not edit by hand. "
        "-->", "",
        f"This page is generated by `bench/ferry_bench/report.py` from the "
        f"ferry-bench {files}, and must not be edited by hand. "
        "Regenerate it from the repository's top directory with:", "",
        "```sh", command, "```", "",
        "Each run's JSON comes from `ferry-bench --json FILE`; the runs "
        "table gives the command and the machine of each. "
        f"[ferry-bench's README]({readme}) says how a cell is measured and "
        "what each target checks.", "",
        "ferry-bench measures ferry against plain CAF in the same run, the "
        "rows compared taking turns round by round: `ratio` is a row's "
        "messages per second over CAF as shipped (`raw-caf`) sending the "
        "same payload type, `ratio_tuned` over CAF given a ferry node's "
        "scheduler settings (`raw-caf-tuned`), `ratio_to_limit` over the "
        "machine's limit without actors (`socket` over tcp and netns, "
        "`tls-socket` over tls, `memcpy` over ipc; for round trips the "
        "limit's round-trip time over the row's), so 1.0 is at the limit. "
        "A tls row's `ratio` is over the plain ferry tcp row of its cell. "
        "`ipc` rows are two processes of one host (a same-host lane), `tcp` "
        "rows two processes that ferry treats as two hosts, over loopback "
        "(ferry's own TCP transport; only the CAF baselines take CAF's "
        "middleman), `netns` rows nodes on emulated hosts with shaped "
        "links. The same row moves between runs on a shared machine (by how "
        "much: the notes under the runs table): read ranges.", ""]


def main(argv):
    if len(argv) < 3 or argv[1].startswith("-"):
        print(USAGE, file=sys.stderr)
        return 2
    out_path, paths = argv[1], argv[2:]
    runs = [Run(i + 1, p) for i, p in enumerate(paths)]
    lines = header(out_path, paths) + runs_section(runs)
    for mode in modes_of(runs):
        of_mode = [r for r in runs if r.mode == mode]
        # Runs of the Python rows or the load program alone have no matrix
        # to report.
        matrix = [r for r in of_mode if r.results]
        lines += targets_section(mode, matrix)
        lines += ratios_section(mode, matrix)
        lines += one_shot_section(mode, matrix)
        lines += python_section(mode, of_mode)
        lines += load_section(mode, of_mode,
                              os.path.dirname(os.path.abspath(out_path)))
        lines += entities_section(mode, of_mode)
    while lines and lines[-1] == "":
        lines.pop()
    lines = wrap_prose(lines)
    text = "\n".join(lines) + "\n"
    try:
        with open(out_path, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    except OSError as e:
        print(f"report.py: cannot write {out_path}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
