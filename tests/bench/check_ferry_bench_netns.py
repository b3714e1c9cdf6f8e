#!/usr/bin/env python3
"""Runs ferry-bench's netns broadcast row and checks what it writes.

Usage: check_ferry_bench_netns.py FERRY_BENCH WORK_DIR

A netns row gives every node a host of its own (a network namespace, its
link shaped each way; bench/ferry_bench/emulated_hosts.hpp) and sends one
store object to three of them. This test runs the smallest such row as a
user does and checks that it ran across the namespaces: the row is there
with its link rate, every receiver got the object (the owner's copies and
the receivers' relayed bytes add up to three objects), and the table names
the emulated hosts. It checks no speed.

Where the machine allows no network namespaces, ferry-bench skips the row
with the reason; so does this test (exit code 77), unless
FERRY_REQUIRE_PRIVILEGED_TESTS=1 (CI sets it): then it fails.
"""
import json
import math
import os
import subprocess
import sys

SIZE = 64 << 20
MBIT = 4000


def main():
    bench, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    js = os.path.join(work, "netns.json")
    if os.path.exists(js):
        os.remove(js)
    res = subprocess.run([bench, "--transport", "netns", "--payload", "64M",
                          "--handoff-runs", "2", "--host-link-mbit",
                          str(MBIT), "--json", js],
                         capture_output=True, text=True, timeout=300)
    if "ferry-bench: no netns rows:" in res.stderr:
        reason = res.stderr.split("no netns rows:", 1)[1].strip()
        if os.environ.get("FERRY_REQUIRE_PRIVILEGED_TESTS") == "1":
            print("FAILED: no network namespaces here (a failure, not a "
                  f"skip: FERRY_REQUIRE_PRIVILEGED_TESTS=1): {reason}")
            return 1
        print(f"SKIPPED: no network namespaces here: {reason}")
        return 77
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
        return cond

    if not check(res.returncode == 0,
                 f"ferry-bench exited {res.returncode}:\n{res.stderr[-3000:]}"):
        return report(failures)
    check(f"each host's link {MBIT} Mbit/s each way" in res.stdout,
          "the table does not name the emulated hosts and their rate")
    with open(js) as f:
        doc = json.load(f)
    check(doc.get("skipped") == [], f"skipped: {doc.get('skipped')}")
    rows = [r for r in doc.get("results", []) if r.get("transport") == "netns"]
    if not check(len(rows) == 1, f"expected one netns row, got {len(rows)}"):
        return report(failures)
    r = rows[0]
    check(r.get("pattern") == "broadcast" and r.get("payload_bytes") == SIZE
          and r.get("payload_type") == "shared_array",
          f"wrong row: {r.get('pattern')} {r.get('payload_type')} "
          f"{r.get('payload_bytes')}")
    check(r.get("host_link_mbit") == MBIT,
          f"host_link_mbit {r.get('host_link_mbit')}, expected {MBIT}")
    for key in ("p50_us", "single_p50_us", "broadcast_ratio", "cpu_ratio"):
        check(isinstance(r.get(key), (int, float)) and r[key] > 0,
              f"{key} is {r.get(key)}")
    owner, relayed = r.get("owner_copies"), r.get("relayed_bytes")
    if check(isinstance(owner, (int, float)) and isinstance(relayed, (int, float))
             and owner > 0 and relayed >= 0,
             f"owner_copies {owner}, relayed_bytes {relayed}"):
        # Frames carry a few bytes besides the array's.
        got = owner + relayed / SIZE
        check(math.isclose(got, 3, rel_tol=0.01),
              f"owner copies + relayed objects = {got:.4f}, expected 3 (every "
              "receiver gets the object once)")
    return report(failures)


def report(failures):
    for f in failures:
        print("FAILED:", f)
    if failures:
        return 1
    print("ferry-bench netns checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
