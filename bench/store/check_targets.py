#!/usr/bin/env python3
"""Checks ferry_store_bench's JSON against the store's performance targets.

    ferry_store_bench --benchmark_out=store.json --benchmark_out_format=json
    bench/store/check_targets.py store.json

Targets: put of 64 MiB and more within 1.25x of memcpy of the same bytes;
get under 20 us at every size; create+seal+release of 1 KiB at 500k/s or
more. Uses medians when the run has repetitions, real time otherwise.
Exits 1 if a target is missed.
"""
import json
import sys


def times(doc):
    """Returns {row name: real time in ns}, preferring medians."""
    plain, medians = {}, {}
    for b in doc["benchmarks"]:
        if b.get("error_occurred"):
            continue
        scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        value = b["real_time"] * scale
        name = b.get("run_name", b["name"])
        if b.get("aggregate_name") == "median":
            medians[name] = value
        elif b.get("run_type", "iteration") == "iteration":
            plain.setdefault(name, value)
    plain.update(medians)
    return plain


def main(path):
    with open(path) as f:
        t = times(json.load(f))
    ok = True
    print("put vs memcpy (target <= 1.25x from 64 MiB):")
    for size in sorted(int(n.split("/")[1]) for n in t if n.startswith("BM_put/")):
        put, ref = t.get(f"BM_put/{size}"), t.get(f"BM_memcpy/{size}")
        if put is None or ref is None:
            continue
        ratio = put / ref
        verdict = ""
        if size >= 64 << 20:
            verdict = "ok" if ratio <= 1.25 else "MISSED"
            ok &= ratio <= 1.25
        print(f"  {size:>11} B  put {put / 1e3:12.1f} us  memcpy {ref / 1e3:12.1f} us"
              f"  ratio {ratio:5.2f}  {verdict}")
    print("get (target < 20 us at every size):")
    for name in sorted((n for n in t if n.startswith("BM_get/")),
                       key=lambda n: int(n.split("/")[1])):
        good = t[name] < 20e3
        ok &= good
        print(f"  {name:>22}  {t[name]:10.1f} ns  {'ok' if good else 'MISSED'}")
    name = "BM_create_seal_release/1024"
    if name in t:
        rate = 1e9 / t[name]
        good = rate >= 500e3
        ok &= good
        print(f"create+seal+release 1 KiB: {rate / 1e3:.0f}k/s (target >= 500k/s)"
              f"  {'ok' if good else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "store.json"))
