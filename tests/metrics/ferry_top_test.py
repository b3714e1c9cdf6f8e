"""ferry-top shows the links of two nodes of the `cluster` sample while it
runs: the coordinator's link to a worker and that worker's link back, in
one frame (--once).

Usage: ferry_top_test.py CLUSTER_SAMPLE FERRY_TOP
"""

import queue
import subprocess
import sys
import threading

DEADLINE_S = 60


def pump(stream, lines):
    for line in stream:
        lines.put(line.rstrip("\n"))


def main():
    cluster, ferry_top = sys.argv[1], sys.argv[2]
    proc = subprocess.Popen([cluster, "--ferry.metrics.port=0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    lines = queue.Queue()
    for stream in (proc.stdout, proc.stderr):
        threading.Thread(target=pump, args=(stream, lines),
                         daemon=True).start()
    try:
        endpoints = {}
        seen = []
        # The coordinator and worker-0 (worker-1 is the one the sample
        # kills) print their endpoints; worker-0 once it has registered.
        while not {"coordinator", "worker-0"} <= endpoints.keys():
            try:
                line = lines.get(timeout=DEADLINE_S)
            except queue.Empty:
                raise AssertionError(f"no endpoints printed: {seen}") from None
            seen.append(line)
            if " serves metrics on " in line:
                node, where = line.removeprefix("cluster: ").split(
                    " serves metrics on ")
                endpoints[node] = where
        top = subprocess.run(
            [ferry_top, "--once", "--interval", "0.3",
             endpoints["coordinator"], endpoints["worker-0"]],
            capture_output=True, text=True, timeout=DEADLINE_S)
        print(top.stdout)
        assert top.returncode == 0, top.stderr
        rows = [line.split() for line in top.stdout.splitlines()]
        header = next(r for r in rows if r[:2] == ["NODE", "PEER"])
        assert header[2] == "FAMILIES", header
        links = {(r[0], r[1]): r for r in rows if len(r) == 9
                 and r[0] in endpoints}
        assert ("coordinator", "worker-0") in links, links
        assert ("worker-0", "coordinator") in links, links
        # Both links named above have carried the registration and its
        # answer, so they show a family. A link to another worker may still
        # be waiting for its first message: ferry-top shows "-" for it.
        for link in (("coordinator", "worker-0"), ("worker-0", "coordinator")):
            assert links[link][2] != "-", f"no family on {links[link]}"
        for row in links.values():
            for figure in row[3:]:
                float(figure)
        footer = "\n".join(top.stdout.splitlines()[-2:])
        assert "coordinator (" in footer and "worker-0 (" in footer, footer
        assert proc.wait(timeout=DEADLINE_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    print("ferry_top_test: ferry-top showed both nodes' links")


if __name__ == "__main__":
    main()
