"""The dashboard in a real browser: Debian's chromium, headless, driven by
Debian's python3-selenium through chromium-driver.

Usage: dashboard_browser_test.py METRICS_NODE MODE [SCREENSHOT]

MODE `lanes`: three metrics_node processes on this host form a cluster (their
links go through same-host lanes), one of them named with a <script> tag;
MODE `tls`: the same with every link on TLS and lanes off. Under a small
request load, the page served by member a must show three members up, link
rates that change between two reads, the <script> name as text, member b's
own links and rate charts (asked of b through the cluster) at a click, every
chart's series in step with its samples, no browser console error; after
member c is killed (SIGKILL), it must show c unreachable and then down
without a reload, each within 2 s of the moment a's own API says so; and
while a is stopped (SIGSTOP) the page must say that the node stopped
answering, and go live again once it runs on. The page's screenshot, taken after
FERRY_DASHBOARD_SETTLE seconds (default 8) of load, goes to SCREENSHOT
(default: dashboard-<MODE>.png in the working directory).

MODE `cost`: an idle cluster of three; a's CPU time over 10 s with no page
open, then over 10 s with the page open: the page may cost at most 2 % of a
core.

Exits 77 (skipped) when chromium, chromedriver or selenium is missing,
unless FERRY_REQUIRE_BROWSER_TESTS=1 (CI), where that fails.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from nodes import (Node, cpu_used, free_port, poll, private_store,
                   thread_cpu_ns)

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INJECTED = 'b<script>window.ferryInjected=1</script><img src=x onerror="window.ferryInjected=2">'


def skip_or_fail(why):
    if os.environ.get("FERRY_REQUIRE_BROWSER_TESTS") == "1":
        print(f"dashboard_browser_test: {why} (FERRY_REQUIRE_BROWSER_TESTS=1: "
              "a missing browser fails; bash dev.sh deps installs it)")
        sys.exit(1)
    print(f"dashboard_browser_test: skipped: {why}; bash dev.sh deps "
          "installs chromium, chromium-driver and python3-selenium")
    sys.exit(77)


try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    skip_or_fail("python3-selenium is not installed")
for binary in (CHROMIUM, CHROMEDRIVER):
    if not os.path.exists(binary):
        skip_or_fail(f"{binary} is not there")


def browser(profile):
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu",
                 "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                 "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 "--window-size=1500,1450", f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


def cluster_flags(address, seed):
    return ["--ferry.cluster.name=dash", f"--ferry.cluster.address={address}",
            f'--ferry.cluster.seeds=["{seed}"]',
            "--ferry.cluster.gossip-interval=200ms",
            "--ferry.cluster.heartbeat-interval=200ms",
            "--ferry.cluster.acceptable-pause=1s",
            "--ferry.cluster.seed-timeout=300ms",
            "--ferry.cluster.stable-after=2s"]


def get_json(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}",
                                timeout=10) as reply:
        return json.loads(reply.read())


def start_cluster(binary, mode, pki):
    """Starts members a, b, c (c through a) and returns them, up."""
    store = private_store()
    names = {"a": "a", "b": INJECTED if mode == "lanes" else "b", "c": "c"}
    addresses = {k: f"127.0.0.1:{free_port()}" for k in names}
    nodes = []
    for key in ("a", "b", "c"):
        extra = cluster_flags(addresses[key], addresses["a"])
        if mode == "tls":
            extra += [f"--ferry.tls.certificate={pki}/{key}.pem",
                      f"--ferry.tls.key={pki}/{key}.key",
                      f"--ferry.tls.ca-file={pki}/ca.pem",
                      "--ferry.link.no-lane"]
        nodes.append(Node(binary, names[key], store, extra))
        if key == "a":
            time.sleep(0.5)  # a forms the cluster; b and c join it
    a = nodes[0]
    poll("a sees three members up",
         lambda: [m["status"] for m in get_json(a.metrics_port,
                                                "/api/v1/members")["members"]]
         == ["up"] * 3, 60)
    return nodes, addresses


class Load:
    """Requests between the members until stopped: b and c ask a, a asks b."""

    def __init__(self, a, b, c):
        self.stop = threading.Event()
        self.threads = []
        for asker, target in ((b, a), (c, a), (a, b)):
            asker.command(f"connect {target.port}", "connected")
            t = threading.Thread(target=self.run, args=(asker,), daemon=True)
            self.threads.append(t)
            t.start()

    def run(self, asker):
        while not self.stop.is_set():
            try:
                asker.command("send 20 record", "sent", 30)
            except (AssertionError, OSError):
                return  # the node was killed
            time.sleep(0.05)

    def close(self):
        self.stop.set()
        for t in self.threads:
            t.join(35)


# The page redraws its tables on every event: they are read in one script,
# not element by element (an element read a moment later may be gone).
def rates_shown(driver):
    return tuple(driver.execute_script("""
        return Array.from(document.querySelectorAll(
                 '#links td.rate-out, #links td.rate-in, #fact-rate'))
               .map((x) => x.textContent);"""))


def links_shown(driver):
    return driver.execute_script("""
        const rows = document.querySelectorAll('#links tbody tr');
        return Object.fromEntries(Array.from(rows).map((r) =>
          [r.dataset.peer, r.querySelectorAll('td')[1].textContent]));""")


def member_row(driver, name):
    return driver.execute_script("""
        for (const r of document.querySelectorAll('#members tbody tr'))
          if (r.dataset.member === arguments[0])
            return {state: r.querySelector('td.state').textContent,
                    reachable: r.querySelector('td.reachable').textContent,
                    name: r.querySelector('td.name').textContent};
        return null;""", name)


def member_links_shown(driver):
    return driver.execute_script("""
        if (document.getElementById('member-panel').classList.contains('hidden'))
          return null;
        return Array.from(document.querySelectorAll('#member-links tbody tr'))
               .map((r) => r.dataset.peer).sort();""")


# Samples in b's message-rate chart and the largest rate among them (Chart.js
# keeps the chart of a canvas, found by its id).
def member_chart_shown(driver):
    return driver.execute_script("""
        const c = Chart.getChart('member-chart-rates');
        if (!c) return null;
        const values = c.data.datasets.flatMap((d) =>
          d.data.filter((v) => v !== null));
        return {samples: c.data.labels.length,
                series: c.data.datasets.map((d) => d.label).sort(),
                peak: Math.max(0, ...values)};""")


# Charts whose series do not hold one value per sample (a series drawn
# against the wrong times), by canvas id.
def misaligned_charts(driver):
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('canvas'))
          .map((canvas) => Chart.getChart(canvas))
          .filter((c) => c && c.data.datasets.some((d) =>
                    d.data.length !== c.data.labels.length))
          .map((c) => c.canvas.id);""")


def status_shown(driver):
    return driver.execute_script(
        "return document.getElementById('status').textContent;")


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def watch_api(port, address, seen, stop):
    """Records when a's API first shows the member at `address`
    unreachable and down or gone (time.monotonic())."""
    while not stop.is_set():
        try:
            members = get_json(port, "/api/v1/members")["members"]
        except OSError:
            continue
        now = time.monotonic()
        m = next((m for m in members if m["address"] == address), None)
        # Downed, then removed: a member gone from the view was downed.
        if m is None or m["status"] in ("down", "removed"):
            seen.setdefault("unreachable", now)
            seen.setdefault("down", now)
        elif not m["reachable"]:
            seen.setdefault("unreachable", now)
        time.sleep(0.05)


def cpu_seconds_over(pid, seconds):
    """CPU time process `pid` runs in the next `seconds`, as the scheduler
    counts it (nodes.thread_cpu_ns)."""
    before = thread_cpu_ns(pid)
    time.sleep(seconds)
    return cpu_used(pid, before, thread_cpu_ns(pid))


def measure_cost(binary):
    nodes, _ = start_cluster(binary, "lanes", None)
    a = nodes[0]
    profile = tempfile.mkdtemp(prefix="ferry-dashboard-")
    driver = None
    try:
        time.sleep(2)
        without = cpu_seconds_over(a.proc.pid, 10)
        driver = browser(profile)
        driver.get(f"http://127.0.0.1:{a.metrics_port}/")
        poll("the page is live",
             lambda: status_shown(driver) == "live", 20)
        time.sleep(2)
        with_page = cpu_seconds_over(a.proc.pid, 10)
        cost = (with_page - without) / 10 * 100
        print(f"dashboard_browser_test: node a's CPU over 10 s: "
              f"{without / 10 * 100:.2f} % of a core without a page, "
              f"{with_page / 10 * 100:.2f} % with the page open "
              f"(the page costs {cost:.2f} % of a core; bound 2 %)")
        assert cost <= 2.0, f"the open page costs {cost:.2f} % of a core"
    finally:
        if driver:
            driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
        for n in reversed(nodes):
            n.close()


def main():
    binary, mode = sys.argv[1], sys.argv[2]
    if mode == "cost":
        measure_cost(binary)
        return
    shot = sys.argv[3] if len(sys.argv) > 3 else f"dashboard-{mode}.png"
    pki = None
    if mode == "tls":
        pki = tempfile.mkdtemp(prefix="ferry-dashboard-pki-")
        subprocess.run(["sh", os.environ["FERRY_MAKE_TEST_PKI"], pki, "a", "b",
                        "c"], check=True, capture_output=True)
    nodes, addresses = start_cluster(binary, mode, pki)
    a, b, c = nodes
    load = Load(a, b, c)
    profile = tempfile.mkdtemp(prefix="ferry-dashboard-")
    driver = browser(profile)
    stop = threading.Event()
    try:
        driver.get(f"http://127.0.0.1:{a.metrics_port}/")
        poll("the page is live",
             lambda: status_shown(driver) == "live", 20)
        poll("the page shows three members up",
             lambda: all((member_row(driver, b_name) or {}).get("state")
                         == "up" for b_name in (a.name, b.name, c.name)), 20)
        kinds = links_shown(driver)
        want = "lane" if mode == "lanes" else "tls"
        assert kinds == {b.name: want, c.name: want}, kinds
        first = rates_shown(driver)
        poll("the link rates change between two reads",
             lambda: rates_shown(driver) != first
             and any(x not in ("0.0", "–", "") for x in rates_shown(driver)),
             15)
        print(f"dashboard_browser_test: rates read {first}, then "
              f"{rates_shown(driver)}")
        if mode == "lanes":
            row = member_row(driver, INJECTED)
            assert row is not None, "no row for the <script> name"
            assert row["name"].startswith(INJECTED), row
            assert driver.execute_script("return window.ferryInjected") is \
                None, "a node name ran as script"
        # Member b's own links, asked of b through the cluster.
        driver.find_element(
            By.CSS_SELECTOR, f'#members tr[data-address="{addresses["b"]}"] '
            'button[data-action="figures"]').click()
        poll("the page shows b's links, from b",
             lambda: member_links_shown(driver) == sorted([a.name, c.name]),
             10)
        # The charts gather some history for the picture, the store some
        # objects that a keeps.
        settle_end = time.monotonic() + float(
            os.environ.get("FERRY_DASHBOARD_SETTLE", "8"))
        while time.monotonic() < settle_end:
            a.command("put 4000000", "put")
            time.sleep(1)
        # b's charts hold the rates b measured, one sample per 2 s poll.
        poll("the page charts b's message rates, from b",
             lambda: (member_chart_shown(driver) or {}).get("samples", 0) >= 3
             and member_chart_shown(driver)["peak"] > 0, 15)
        print(f"dashboard_browser_test: b's rate chart "
              f"{member_chart_shown(driver)}")
        misaligned = misaligned_charts(driver)
        assert not misaligned, f"series out of step with their samples: " \
            f"{misaligned}"
        driver.save_screenshot(shot)
        print(f"dashboard_browser_test: screenshot {os.path.abspath(shot)}")
        # Member c dies: the page follows a's own view.
        seen = {}
        watcher = threading.Thread(target=watch_api, daemon=True, args=(
            a.metrics_port, addresses["c"], seen, stop))
        watcher.start()
        killed = time.monotonic()
        c.proc.send_signal(signal.SIGKILL)
        c.proc.wait()
        shown = {}
        deadline = killed + 60
        while time.monotonic() < deadline and "down" not in shown:
            row = member_row(driver, "c")
            now = time.monotonic()
            if row and row["reachable"] == "no" and "unreachable" not in shown:
                shown["unreachable"] = now
            if row is None or row["state"] in ("down", "removed"):
                shown.setdefault("unreachable", now)
                shown["down"] = now
            time.sleep(0.1)
        stop.set()
        watcher.join(5)
        assert "down" in shown, f"the page never showed c down ({shown})"
        for what in ("unreachable", "down"):
            assert what in seen, f"a's API never showed c {what}"
            lag = shown[what] - seen[what]
            print(f"dashboard_browser_test: c {what}: a's API after "
                  f"{seen[what] - killed:.2f} s, the page after "
                  f"{shown[what] - killed:.2f} s ({lag:+.2f} s)")
            assert lag <= 2.0, f"the page showed c {what} {lag:.2f} s late"
        errors = console_errors(driver)
        assert not errors, f"browser console errors: {errors}"
        # a stops answering (SIGSTOP): the page says so, and goes live
        # again by itself once a runs on.
        a.proc.send_signal(signal.SIGSTOP)
        try:
            poll("the page says a stopped answering",
                 lambda: status_shown(driver) == "not answering", 10)
        finally:
            a.proc.send_signal(signal.SIGCONT)
        poll("the page is live again", lambda: status_shown(driver) == "live",
             20)
        print(f"dashboard_browser_test: {mode}: the page followed the "
              "cluster live, with no console error")
    finally:
        stop.set()
        load.close()
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
        if pki:
            shutil.rmtree(pki, ignore_errors=True)
        for n in (a, b):
            n.close()


if __name__ == "__main__":
    main()
