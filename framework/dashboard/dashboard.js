// ferry's dashboard: draws one node's snapshot (GET /api/v1/snapshot, then
// live from the event stream /api/v1/events) and its rate history (GET
// /api/v1/rates). Every string from the node goes into the page as text
// (textContent), never as HTML. Operator actions (down, leave) appear only
// when the node has a token configured, and are sent as POST with it.
// Another member's links, store and rates are asked of it through the
// cluster (GET /api/v1/members/snapshot), never by the browser dialing it;
// its charts hold the samples gathered since its panel opened.
"use strict";

(function () {
  const STALE_MS = 3500;      // no event for this long: the node stopped answering
  const HISTORY = 300;        // samples kept in the charts
  const palette = ["#1f6feb", "#d9480f", "#2b8a3e", "#862e9c", "#e67700",
                   "#0b7285", "#c2255c", "#5c940d"];

  const $ = (id) => document.getElementById(id);
  let lastEvent = 0;
  let actionsOn = false;
  let selected = null;        // {address, name} of the member shown below
  let selectedTimer = null;
  let nodeCharts = null;      // this node's charts
  let memberCharts = null;    // the selected member's charts

  // -- formatting -------------------------------------------------------------

  function rate(x) {
    if (x === null || x === undefined) return "–";
    if (x >= 1e6) return (x / 1e6).toFixed(2) + "M";
    if (x >= 1e3) return (x / 1e3).toFixed(1) + "k";
    return x >= 10 ? x.toFixed(0) : x.toFixed(1);
  }

  function bytes(x) {
    if (x === null || x === undefined) return "–";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (x >= 1024 && i < units.length - 1) { x /= 1024; ++i; }
    return (i === 0 ? x.toFixed(0) : x.toFixed(1)) + " " + units[i];
  }

  function duration(s) {
    if (s < 60) return s.toFixed(0) + " s";
    if (s < 3600) return (s / 60).toFixed(0) + " min";
    return (s / 3600).toFixed(1) + " h";
  }

  function clock(ms) {
    return new Date(ms).toLocaleTimeString();
  }

  // -- DOM helpers: text only -------------------------------------------------

  function cell(text, cls) {
    const td = document.createElement("td");
    if (cls) td.className = cls;
    td.textContent = text;
    return td;
  }

  function pill(text, cls) {
    const td = document.createElement("td");
    const span = document.createElement("span");
    span.className = "pill " + cls;
    span.textContent = text;
    td.appendChild(span);
    return td;
  }

  function replaceRows(tbody, rows) {
    tbody.replaceChildren(...rows);
  }

  function show(el, on) {
    el.classList.toggle("hidden", !on);
  }

  function banner(text) {
    $("banner").textContent = text || "";
    show($("banner"), !!text);
  }

  // -- sections ---------------------------------------------------------------

  function drawNode(node) {
    $("node-name").textContent = node.name;
    $("cluster-name").textContent = node.cluster ? "in cluster " + node.cluster : "";
    document.title = "ferry · " + node.name;
    $("fact-uptime").textContent = duration(node.uptime_seconds);
    $("fact-memory").textContent = bytes(node.resident_bytes);
    actionsOn = node.actions;
    show($("actions"), actionsOn);
  }

  function drawMembers(m) {
    const tbody = $("members").querySelector("tbody");
    show($("no-cluster"), m.cluster === null);
    show($("members"), m.cluster !== null);
    if (m.cluster === null) {
      $("fact-members").textContent = "–";
      $("fact-converged").textContent = "–";
      return;
    }
    const up = m.members.filter((x) => x.status === "up" && x.reachable).length;
    $("fact-members").textContent = up + " / " + m.members.length;
    $("fact-converged").textContent = m.converged ? "converged" : "gossiping";
    // Rows are kept and updated in place (a row is its member's address):
    // a button pressed while an event arrives still gets its click.
    const rows = new Map(Array.from(tbody.children).map((r) =>
      [r.dataset.address, r]));
    m.members.forEach((x, i) => {
      let tr = rows.get(x.address);
      if (!tr) {
        tr = document.createElement("tr");
        tr.dataset.address = x.address;
        for (const cls of ["name", "", "state", "reachable", "num", "", "num",
                           "buttons"]) {
          const td = document.createElement("td");
          if (cls) td.className = cls;
          tr.appendChild(td);
        }
      }
      rows.delete(x.address);
      if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] || null);
      drawMember(tr, x);
    });
    for (const gone of rows.values()) gone.remove();
  }

  function setText(el, text) {
    if (el.textContent !== text) el.textContent = text;
  }

  function setPill(td, text, cls) {
    let span = td.firstChild;
    if (!span) {
      span = document.createElement("span");
      td.appendChild(span);
    }
    span.className = "pill " + cls;
    setText(span, text);
  }

  function drawMember(tr, x) {
    const td = tr.children;
    tr.dataset.member = x.name;
    const tags = (x.leader ? ["leader"] : []).concat(x.self ? ["this node"] : []);
    const key = x.name + "\u0000" + tags.join(",");
    if (td[0].dataset.key !== key) {
      td[0].dataset.key = key;
      td[0].replaceChildren(document.createTextNode(x.name),
                            ...tags.map((t) => tag(t)));
    }
    setText(td[1], x.address);
    setPill(td[2], x.status, x.status);
    setPill(td[3], x.reachable ? "yes" : "no", x.reachable ? "yes" : "no");
    setText(td[4], x.phi === null ? "–" : x.phi.toFixed(2));
    setText(td[5], x.uid);
    setText(td[6], x.up_number ? String(x.up_number) : "–");
    const live = x.status !== "down" && x.status !== "removed";
    const wanted = (!x.self && live ? ["figures"] : [])
      .concat(actionsOn && live ? ["down", "leave"] : []);
    if (td[7].dataset.key !== wanted.join(",")) {
      td[7].dataset.key = wanted.join(",");
      td[7].replaceChildren(...wanted.map((w) => w === "figures"
        ? viewButton(x.address, x.name) : actionButton(w, x.address)));
    }
  }

  function tag(text) {
    const span = document.createElement("span");
    span.className = "tag";
    span.textContent = text;
    return span;
  }

  function viewButton(address, name) {
    const b = document.createElement("button");
    b.textContent = "figures";
    b.dataset.action = "figures";
    b.addEventListener("click", () => selectMember(address, name));
    return b;
  }

  function selectMember(address, name) {
    selected = {address: address, name: name};
    $("member-title").textContent = "Member " + name + " (" + address +
      "), through the cluster";
    show($("member-panel"), true);
    clearInterval(selectedTimer);
    dropCharts(memberCharts);
    memberCharts = makeCharts("member-");
    loadMember();
    selectedTimer = setInterval(loadMember, 2000);
  }

  function closeMember() {
    selected = null;
    clearInterval(selectedTimer);
    dropCharts(memberCharts);
    memberCharts = null;
    show($("member-panel"), false);
  }

  async function loadMember() {
    if (!selected) return;
    const which = selected;
    try {
      const reply = await fetch("api/v1/members/snapshot?address=" +
                                encodeURIComponent(which.address));
      const body = await reply.json();
      if (selected !== which) return;
      show($("member-error"), !reply.ok);
      if (!reply.ok) {
        $("member-error").textContent = body.error;
        return;
      }
      const store = body.store.store;
      const ents = body.entities.entities;
      $("member-facts").textContent = "up " + duration(body.node.uptime_seconds) +
        ", resident " + bytes(body.node.resident_bytes) +
        (store ? ", store " + bytes(store.used) + " of " + bytes(store.capacity) +
                 " in " + store.objects + " objects" : ", no store") +
        (ents ? "; entities active: " + (Object.entries(ents.active)
                  .map(([type, n]) => type + " " + n).join(", ") || "none") +
                ", " + ents.shards + " shards" : "");
      fillLinks($("member-links").querySelector("tbody"), body.links.links);
      if (addSamples(memberCharts, body.rates.samples)) redraw(memberCharts);
    } catch (e) {
      $("member-error").textContent = "cannot reach this node: " + e;
      show($("member-error"), true);
    }
  }

  function actionButton(what, address) {
    const b = document.createElement("button");
    b.textContent = what;
    b.dataset.action = what;
    b.addEventListener("click", () => act(what, address));
    return b;
  }

  async function act(what, address) {
    const token = $("token").value;
    const result = $("action-result");
    try {
      const reply = await fetch("api/v1/members/" + what + "?address=" +
                                encodeURIComponent(address), {
        method: "POST", headers: {"Authorization": "Bearer " + token}});
      const body = await reply.json();
      result.textContent = reply.ok ? what + " " + address + ": done"
                                    : what + " " + address + ": " + body.error;
    } catch (e) {
      result.textContent = what + " " + address + ": " + e;
    }
  }

  function drawLinks(l) {
    show($("no-links"), l.links.length === 0);
    const up = l.links.filter((x) => x.up);
    $("fact-links").textContent = up.length + (l.links.length > up.length
      ? " (" + (l.links.length - up.length) + " down)" : "");
    $("fact-rate").textContent =
      rate(fillLinks($("links").querySelector("tbody"), l.links));
  }

  // Fills `tbody` with one row per link; returns the messages per second
  // of all links together.
  function fillLinks(tbody, links) {
    let total = 0;
    replaceRows(tbody, links.map((x) => {
      const tr = document.createElement("tr");
      tr.dataset.peer = x.peer;
      tr.appendChild(cell(x.peer, "name"));
      if (!x.up) {
        tr.appendChild(pill("down", "down"));
        for (let i = 0; i < 7; ++i) tr.appendChild(cell("", "num"));
        tr.appendChild(cell(x.last_error || ""));
        return tr;
      }
      tr.appendChild(pill(x.kind, x.kind));
      const used = [...new Set(x.families_in_use.sent.concat(
        x.families_in_use.received))];
      const fams = cell(used.length ? used.join(", ") : "–");
      fams.title = "may send with: " + x.families.join(", ");
      tr.appendChild(fams);
      const r = x.per_second;
      total += r.messages_sent + r.messages_received;
      tr.appendChild(cell(rate(r.messages_sent), "num rate-out"));
      tr.appendChild(cell(rate(r.messages_received), "num rate-in"));
      tr.appendChild(cell(bytes(r.bytes_sent), "num"));
      tr.appendChild(cell(bytes(r.bytes_received), "num"));
      tr.appendChild(cell(String(x.credit_waits), "num"));
      tr.appendChild(cell(String(x.refusals), "num"));
      tr.appendChild(cell(x.last_error || ""));
      return tr;
    }));
    return total;
  }

  function drawEntities(e) {
    show($("entities-panel"), e.entities !== null);
    if (e.entities === null) return;
    const x = e.entities;
    replaceRows($("entities").querySelector("tbody"),
      Object.keys(x.active).map((type) => {
        const tr = document.createElement("tr");
        tr.appendChild(cell(type));
        tr.appendChild(cell(String(x.active[type]), "num"));
        return tr;
      }));
    $("entity-facts").textContent = x.shards + " shards held, " + x.buffered +
      " messages buffered, " + x.activations + " activations, " + x.hand_offs +
      " hand-offs, " + x.saves + " saves, " + x.conflicts + " conflicts";
  }

  // -- charts -----------------------------------------------------------------

  // One set of charts (messages per second, encode/decode time, the store)
  // over the canvases whose ids start with `prefix`: "" for this node's,
  // "member-" for the selected member's. Without Chart.js a set has no
  // charts and only its store facts are drawn.
  function makeCharts(prefix) {
    return {
      prefix: prefix,
      last: 0,              // time of the newest sample drawn
      rates: makeChart(prefix + "chart-rates", "messages/s"),
      codec: makeChart(prefix + "chart-codec", "µs"),
      store: makeChart(prefix + "chart-store", "MiB", "objects"),
    };
  }

  function dropCharts(set) {
    if (!set) return;
    for (const c of [set.rates, set.codec, set.store]) if (c) c.destroy();
  }

  function makeChart(id, yLabel, count) {
    if (typeof Chart === "undefined") return null;
    const scales = {x: {ticks: {maxTicksLimit: 6}},
                    y: {beginAtZero: true, title: {display: true, text: yLabel}}};
    if (count)
      scales.count = {position: "right", beginAtZero: true,
                      grid: {drawOnChartArea: false},
                      title: {display: true, text: count}};
    return new Chart($(id), {
      type: "line",
      data: {labels: [], datasets: []},
      options: {
        animation: false, responsive: true, maintainAspectRatio: false,
        interaction: {mode: "index", intersect: false},
        elements: {point: {radius: 0}, line: {borderWidth: 2, tension: 0.2}},
        scales: scales,
        plugins: {legend: {labels: {boxWidth: 12}}},
      },
    });
  }

  function series(chart, name) {
    let ds = chart.data.datasets.find((d) => d.label === name);
    if (!ds) {
      const color = palette[chart.data.datasets.length % palette.length];
      ds = {label: name, data: new Array(chart.data.labels.length).fill(null),
            borderColor: color, backgroundColor: color};
      if (name === "objects") {
        ds.yAxisID = "count";
        ds.borderDash = [4, 3];
      }
      chart.data.datasets.push(ds);
    }
    return ds;
  }

  function push(chart, label, values) {
    if (!chart) return;
    // A new series gets a gap for each sample before this one.
    for (const name of Object.keys(values)) series(chart, name);
    chart.data.labels.push(label);
    for (const ds of chart.data.datasets) {
      ds.data.push(ds.label in values ? values[ds.label] : null);
      if (ds.data.length > HISTORY) ds.data.shift();
    }
    if (chart.data.labels.length > HISTORY) chart.data.labels.shift();
  }

  // Adds the samples newer than the set's newest; true if any was.
  function addSamples(set, samples) {
    if (!set) return false;
    let added = false;
    for (const s of samples) added = addSample(set, s) || added;
    return added;
  }

  function addSample(set, s) {
    if (s.t <= set.last) return false;
    set.last = s.t;
    const label = clock(s.t);
    const rates = {}, codec = {};
    for (const [family, r] of Object.entries(s.families)) {
      rates[family + " out"] = r.sent;
      rates[family + " in"] = r.received;
      if (r.encode_us !== null) codec[family + " encode"] = r.encode_us;
      if (r.decode_us !== null) codec[family + " decode"] = r.decode_us;
    }
    push(set.rates, label, rates);
    push(set.codec, label, codec);
    show($(set.prefix + "no-store"), s.store === null);
    if (s.store !== null) {
      const MiB = 1024 * 1024;
      $(set.prefix + "store-capacity").textContent =
        "capacity " + bytes(s.store.capacity);
      push(set.store, label, {
        "used MiB": s.store.used / MiB, "pinned MiB": s.store.pinned / MiB,
        "spilled MiB": s.store.spilled / MiB, "objects": s.store.objects});
    }
    return true;
  }

  function redraw(set) {
    for (const c of [set.rates, set.codec, set.store]) if (c) c.update("none");
  }

  // -- the stream -------------------------------------------------------------

  function onSnapshot(snap) {
    lastEvent = Date.now();
    const status = $("status");
    status.textContent = "live";
    status.className = "status live";
    banner(typeof Chart === "undefined"
      ? "Charts are off: the node could not serve Chart.js (/chart.js). " +
        "Install Debian's libjs-chart.js on the node's host, or set " +
        "ferry.metrics.chart-js to its path."
      : "");
    drawNode(snap.node);
    drawMembers(snap.members);
    drawLinks(snap.links);
    drawEntities(snap.entities);
    if (addSamples(nodeCharts, snap.rates.samples)) redraw(nodeCharts);
  }

  function watchStaleness() {
    setInterval(() => {
      if (lastEvent === 0 || Date.now() - lastEvent < STALE_MS) return;
      const status = $("status");
      status.textContent = "not answering";
      status.className = "status stale";
      banner("The node stopped answering at " + clock(lastEvent) +
             "; the figures below are from then. The page reconnects by " +
             "itself when the node answers again.");
    }, 500);
  }

  async function start() {
    nodeCharts = makeCharts("");
    try {
      const reply = await fetch("api/v1/rates");
      if (reply.ok) {
        addSamples(nodeCharts, (await reply.json()).samples);
        redraw(nodeCharts);
      }
    } catch (e) {
      // The stream below reports a node that does not answer.
    }
    $("member-close").addEventListener("click", closeMember);
    const events = new EventSource("api/v1/events");
    events.addEventListener("snapshot", (e) => onSnapshot(JSON.parse(e.data)));
    watchStaleness();
  }

  start();
})();
