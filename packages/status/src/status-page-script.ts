/**
 * The page's own script, inlined (the page must work with no network beyond this server). Plain browser
 * JavaScript; it builds the DOM with textContent only, so nothing from the database is parsed as HTML.
 * Figures carry `data-field`/`data-value` attributes so tests and scrapers can read them exactly.
 */
export const STATUS_PAGE_SCRIPT = String.raw`
(() => {
  const root = document.getElementById("status");
  const refreshMs = Number(root.dataset.refreshMs);
  const api = location.pathname.replace(/\/+$/, "") + "/api";
  // Thousands of merchants: the page asks for one page of them, most behind first.
  const PAGE = 100;
  const view = { sort: "lag", offset: 0 };
  const COLORS = { applied: "#2e7d32", pending: "#f9a825", stale: "#78909c", ignored_self: "#90caf9",
    unhandled: "#8e24aa", failed: "#c62828", skipped_revoked: "#6d4c41" };
  const color = (o) => COLORS[o] || "#455a64";

  const el = (tag, attrs, ...children) => {
    const svg = ["svg", "rect", "g", "title", "line", "text"].includes(tag);
    const node = svg ? document.createElementNS("http://www.w3.org/2000/svg", tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== null && v !== undefined) node.setAttribute(k, String(v));
    for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    return node;
  };
  const ago = (s) => s === null ? "—" : s < 90 ? s.toFixed(1) + " s" : s < 5400 ? (s / 60).toFixed(1) + " min" : (s / 3600).toFixed(1) + " h";
  const time = (iso) => iso === null ? "—" : iso.replace("T", " ").replace(/\.\d+Z$/, "Z");
  const cell = (field, value, text) => el("td", { "data-field": field, "data-value": value === null ? "" : value }, text);

  function tiles(s) {
    const revoked = s.merchantsRevoked;
    const lastHour = Object.values(s.eventsLastHour).reduce((a, b) => a + b, 0);
    const tile = (field, label, value, bad) =>
      el("div", { class: "tile" + (bad ? " bad" : "") }, el("span", { class: "label" }, label),
        el("span", { class: "value", "data-field": field, "data-value": value }, value));
    return el("div", { class: "tiles" },
      tile("queue-waiting", "jobs waiting", s.queue.waiting, false),
      tile("queue-scheduled", "jobs scheduled", s.queue.scheduled, false),
      tile("queue-running", "jobs running", s.queue.running, false),
      tile("queue-failed", "failed jobs", s.queue.failed, s.queue.failed > 0),
      tile("orders-to-refresh", "orders to refresh", s.queue.ordersToRefresh, false),
      tile("events-last-hour", "events last hour", lastHour, false),
      tile("merchants-revoked", "revoked merchants", revoked, revoked > 0),
      tile("paused-scopes", "paused by Loops", s.recovery.pauses.length, s.recovery.pauses.length > 0),
      tile("set-aside", "resources set aside", s.recovery.setAside.length, s.recovery.setAside.length > 0),
      tile("refused-events", "events refused by Postgres", s.recovery.refusedEvents.total, false),
      tile("budget-granted", "Loops calls, last second" + (s.requestBudget.narrowedRps ? " (narrowed to " + s.requestBudget.narrowedRps + "/s)" : ""),
        s.requestBudget.grantedLastSecond, s.requestBudget.narrowedRps !== null));
  }

  function pauses(s) {
    if (s.recovery.pauses.length === 0) return el("section", { id: "pauses" });
    return el("section", { id: "pauses" }, el("h2", {}, "Calls paused (Loops refused them; they resume by themselves)"),
      el("table", {}, el("thead", {}, el("tr", {}, ...["scope", "cause", "since", "next probe", "probes", "detail"].map((h) => el("th", {}, h)))),
        el("tbody", {}, ...s.recovery.pauses.map((p) => el("tr", { "data-scope": p.scope },
          cell("scope", p.scope, p.scope), cell("cause", p.cause, p.cause), cell("paused-at", p.pausedAt, time(p.pausedAt)),
          cell("next-probe-at", p.nextProbeAt, time(p.nextProbeAt)), cell("probes", p.probes, p.probes),
          cell("detail", p.detail, p.detail || "—"))))));
  }

  function setAside(s) {
    if (s.recovery.setAside.length === 0) return el("section", { id: "set-aside" });
    return el("section", { id: "set-aside" }, el("h2", {}, "Resources set aside (Loops refused their scope; orders go on — grant it, then loops-sync refresh)"),
      el("table", {}, el("thead", {}, el("tr", {}, ...["resource", "merchant", "code", "since", "next try", "refusals", "detail"].map((h) => el("th", {}, h)))),
        el("tbody", {}, ...s.recovery.setAside.map((r) => el("tr", { "data-resource": r.resource, "data-merchant": r.merchantId || "" },
          cell("resource", r.resource, r.resource), cell("merchant", r.merchantId, r.merchantId || "every merchant"),
          cell("code", r.code, r.code), cell("refused-at", r.refusedAt, time(r.refusedAt)),
          cell("retry-at", r.retryAt, time(r.retryAt)), cell("refusals", r.refusals, r.refusals),
          cell("detail", r.detail, r.detail || "—"))))));
  }

  function ticks(s) {
    if (s.scheduledTicks.length === 0) return el("section");
    const late = s.scheduledTicks.filter((t) => t.overran);
    const alert = late.length === 0 ? el("p", {}, "Every scheduled run kept up with its schedule.")
      : el("p", { id: "tick-overrun-alert", class: "tile bad", role: "alert" },
          late.map((t) => t.task).join(", ") + ": a run did not finish before its next tick. Raise LOOPS_MAX_RPS " +
          "(if Loops allows) or space the schedule out; runs follow each other, they do not pile up.");
    const rows = s.scheduledTicks.map((t) => el("tr", { "data-tick": t.task, class: t.overran ? "bad" : "" },
      cell("task", t.task, t.task), cell("started", t.startedAt, time(t.startedAt)),
      cell("deadline", t.deadline, time(t.deadline)),
      cell("progress", t.itemsDone, t.itemsDone + " / " + t.items + (t.running ? " (running)" : "")),
      cell("duration", t.lastDurationSeconds, ago(t.lastDurationSeconds)),
      cell("interval", t.effectiveIntervalSeconds, t.intervalSeconds === null ? "—"
        : ago(t.effectiveIntervalSeconds) + (t.effectiveIntervalSeconds > t.intervalSeconds
          ? " (stretched from " + ago(t.intervalSeconds) + ")" : "")),
      cell("overran", t.overran, t.overran ? "yes" : "no"), cell("overruns", t.overruns, t.overruns)));
    return el("section", {}, el("h2", {}, "Scheduled runs over every merchant"), alert,
      el("table", { id: "scheduled-ticks" }, el("thead", {}, el("tr", {},
        ...["task", "started", "due by", "merchants done", "last duration", "interval", "overran", "overruns"].map((h) => el("th", {}, h)))),
        el("tbody", {}, ...rows)));
  }

  function pager(s) {
    const first = s.merchantsTotal === 0 ? 0 : view.offset + 1;
    const last = Math.min(view.offset + s.merchants.length, s.merchantsTotal);
    const button = (label, id, enabled, go) => {
      const b = el("button", { type: "button", id }, label);
      b.disabled = !enabled;
      b.addEventListener("click", () => { go(); refresh(); });
      return b;
    };
    return el("p", { id: "merchant-pager" },
      el("span", { "data-field": "merchants-shown", "data-value": first + "-" + last }, "merchants " + first + "–" + last + " of " + s.merchantsTotal),
      " · sorted by " + (view.sort === "lag" ? "lag, most behind first" : "id") + " ",
      button("sort by " + (view.sort === "lag" ? "id" : "lag"), "merchant-sort", true, () => { view.sort = view.sort === "lag" ? "id" : "lag"; view.offset = 0; }),
      button("previous", "merchant-prev", view.offset > 0, () => { view.offset = Math.max(0, view.offset - PAGE); }),
      button("next", "merchant-next", last < s.merchantsTotal, () => { view.offset += PAGE; }));
  }

  function changeFeed(s) {
    const f = s.changeFeed;
    if (!f) return el("section");
    const bytes = (b) => b < 1048576 ? Math.round(b / 1024) + " kB" : b < 1073741824 ? (b / 1048576).toFixed(1) + " MB" : (b / 1073741824).toFixed(2) + " GB";
    const tile = (field, label, value, text) =>
      el("div", { class: "tile" }, el("span", { class: "label" }, label),
        el("span", { class: "value", "data-field": field, "data-value": value === null ? "" : value }, text));
    return el("section", {}, el("h2", {}, "Change feed (replica.changes)"), el("div", { class: "tiles" },
      tile("feed-head", "head position", f.headPosition, f.headPosition === null ? "—" : f.headPosition),
      tile("feed-oldest", "oldest retained", f.oldestPosition, f.oldestPosition === null ? "—" : f.oldestPosition),
      tile("feed-pruned-through", "pruned through", f.prunedThrough, f.prunedThrough),
      tile("feed-rows", f.rowsExact ? "changes" : "changes (estimate)", f.rows, f.rows === null ? "?" : (f.rowsExact ? "" : "~") + f.rows),
      tile("feed-bytes", "size", f.totalBytes, bytes(f.totalBytes))),
      el("p", {}, "Head written " + time(f.headChangedAt) + ". A reader whose cursor is below the pruned-through position gets changes_expired."));
  }

  function consumers(s) {
    const list = s.consumers || [];
    if (list.length === 0) return el("section");
    const head = ["consumer", "filter", "acknowledged through", "lag (changes)", "lag", "leased", "last receive"];
    const rows = list.map((c) => el("tr", { "data-consumer": c.name, class: c.lagSeconds > 600 ? "revoked" : "" },
      cell("consumer", c.name, c.name),
      cell("filter", (c.resources || []).concat(c.merchantIds || []).join(","),
        (c.resources ? c.resources.join(", ") : "every resource") + " · " + (c.merchantIds ? c.merchantIds.join(", ") : "every merchant")),
      cell("acked-through", c.ackedThrough, c.ackedThrough),
      cell("lag-changes", c.lagChanges, c.lagChanges),
      cell("lag-seconds", c.lagSeconds, ago(c.lagSeconds)),
      cell("leased", c.leased, c.leased),
      cell("last-receive", c.lastReceiveAt, time(c.lastReceiveAt))));
    return el("section", {}, el("h2", {}, "Feed consumers (loops-sync consumers list)"),
      el("table", { id: "consumers" }, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))), el("tbody", {}, ...rows)));
  }

  function chart(s) {
    const W = 600, H = 160, n = s.eventsPerMinute.length, bw = W / n;
    const outcomes = Object.keys(s.eventsLastHour);
    const max = Math.max(1, ...s.eventsPerMinute.map((b) => Object.values(b.counts).reduce((a, c) => a + c, 0)));
    const svg = el("svg", { viewBox: "0 0 " + W + " " + (H + 14), role: "img", "aria-label": "events per minute by outcome", id: "events-chart" });
    s.eventsPerMinute.forEach((b, i) => {
      let y = H;
      for (const o of outcomes) {
        const c = b.counts[o] || 0;
        if (c === 0) continue;
        const h = (c / max) * H;
        y -= h;
        svg.append(el("rect", { x: (i * bw).toFixed(2), y: y.toFixed(2), width: (bw - 1).toFixed(2), height: h.toFixed(2),
          fill: color(o), "data-minute": b.minute, "data-outcome": o, "data-count": c },
          el("title", {}, b.minute.slice(11, 16) + " UTC " + o + ": " + c)));
      }
    });
    svg.append(el("line", { x1: 0, y1: H, x2: W, y2: H, stroke: "#999" }));
    svg.append(el("text", { x: 0, y: H + 12, "font-size": 10 }, s.eventsPerMinute[0].minute.slice(11, 16) + " UTC"));
    svg.append(el("text", { x: W, y: H + 12, "font-size": 10, "text-anchor": "end" }, "now · max " + max + "/min"));
    const legend = el("ul", { class: "legend" }, ...outcomes.map((o) =>
      el("li", {}, el("svg", { class: "swatch", viewBox: "0 0 10 10" }, el("rect", { width: 10, height: 10, fill: color(o) })), o + " ",
        el("b", { "data-field": "outcome-" + o, "data-value": s.eventsLastHour[o] }, s.eventsLastHour[o]))));
    return el("section", {}, el("h2", {}, "Events per minute by outcome (last hour, by time received)"), svg, legend);
  }

  function merchants(s) {
    const head = ["merchant", "status", "cursor", "last catch-up", "last webhook", "applied lag", "oldest pending", "pending", "failed events", "jobs queued", "failed jobs"];
    const rows = s.merchants.map((m) => el("tr", { "data-merchant": m.merchantId, class: m.revoked ? "revoked" : "" },
      cell("merchant", m.merchantId, m.merchantId),
      cell("status", m.status, m.status + (m.pausedUntil ? " (paused until " + time(m.pausedUntil) + ")" : "")),
      cell("cursor", m.cursor.afterEventId, m.cursor.afterEventId || "—"),
      cell("last-catchup", m.lastCatchup.finishedAt, time(m.lastCatchup.finishedAt) + (m.lastCatchup.status ? " " + m.lastCatchup.status : "") +
        (m.lastCatchup.error ? ": " + m.lastCatchup.error : "")),
      cell("last-webhook", m.lastWebhookAt, time(m.lastWebhookAt)),
      cell("applied-lag", m.lag.appliedLagSeconds, ago(m.lag.appliedLagSeconds)),
      cell("oldest-pending", m.lag.oldestPendingAgeSeconds, ago(m.lag.oldestPendingAgeSeconds)),
      cell("pending", m.pendingEvents, m.pendingEvents),
      cell("failed-events", m.failedEvents, m.failedEvents),
      cell("queued-jobs", m.queuedJobs, m.queuedJobs),
      cell("failed-jobs", m.failedJobs, m.failedJobs)));
    return el("section", {}, el("h2", {}, "Merchants"), pager(s),
      el("table", { id: "merchants" }, el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))), el("tbody", {}, ...rows)));
  }

  function failedJobs(s) {
    if (s.queue.failedJobs.length === 0) return el("section", {}, el("h2", {}, "Failed jobs"), el("p", {}, "None."));
    return el("section", {}, el("h2", {}, "Failed jobs"), el("table", { id: "failed-jobs" },
      el("thead", {}, el("tr", {}, ...["id", "task", "attempts", "failed at", "last error"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...s.queue.failedJobs.map((j) => el("tr", { "data-job": j.id },
        cell("id", j.id, j.id), cell("task", j.task, j.task), cell("attempts", j.attempts, j.attempts + "/" + j.maxAttempts),
        cell("failed-at", j.failedAt, time(j.failedAt)), cell("last-error", j.lastError, j.lastError || "—"))))));
  }

  function webhookDelivery(s) {
    const d = s.webhookDelivery;
    if (!d) return el("section");
    const alert = d.catchupOnly
      ? el("p", { id: "webhook-delivery-alert", class: "tile bad", role: "alert" },
          "Events are arriving only through catch-up: Loops may have disabled the webhook endpoint (the spec " +
          "disables it after 3 days of failures); re-enable it in the partner portal.")
      : el("p", {}, "Last hour: " + d.lastHour.webhook + " events by webhook, " + d.lastHour.catchup + " only through catch-up.");
    const rows = d.merchants.map((m) => el("tr", { "data-delivery-merchant": m.merchantId },
      cell("merchant", m.merchantId, m.merchantId), cell("via-webhook", m.viaWebhook, m.viaWebhook),
      cell("via-catchup", m.viaCatchup, m.viaCatchup), cell("catchup-percent", m.catchupPercent, m.catchupPercent + " %")));
    return el("section", {}, el("h2", {}, "Webhook delivery (last 24 h, by how each event first arrived)"), alert,
      el("table", { id: "webhook-delivery" }, el("thead", {}, el("tr", {},
        ...["merchant", "via webhook", "only via catch-up", "catch-up share"].map((h) => el("th", {}, h)))), el("tbody", {}, ...rows)));
  }

  function forwarding(s) {
    const f = s.forwarding;
    if (!f) return el("section");
    const off = f.state === "off";
    const bad = f.state === "failing" || f.dead > 0 || (off && f.undelivered > 0);
    const summary = el("p", { id: "forwarding", class: bad ? "tile bad" : "" },
      "Endpoint " + (f.endpoint || "FORWARD_URL") + ": ",
      el("b", { "data-field": "forward-state", "data-value": f.state }, f.state),
      off ? " (no running worker has FORWARD_URL; the changes below wait, kept for RETENTION_DAYS, then pruned)" : "",
      f.heldUntil ? "; held by the endpoint's Retry-After until " + time(f.heldUntil) : "",
      off ? "; undelivered " : "; last 2xx " + time(f.lastSuccessAt) + "; undelivered ",
      el("b", { "data-field": "forward-undelivered", "data-value": f.undelivered }, f.undelivered),
      " (oldest " + ago(f.oldestUndeliveredSeconds) + "); dead ",
      el("b", { "data-field": "forward-dead", "data-value": f.dead }, f.dead),
      f.lastFailure ? "; last failure " + time(f.lastFailureAt) + ": " + f.lastFailure : "");
    const table = f.deadChanges.length === 0 ? el("p", {}, "No dead change.") : el("table", { id: "forward-dead" },
      el("thead", {}, el("tr", {}, ...["webhook-id", "resource", "id", "attempts", "dead at", "last error"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...f.deadChanges.map((d) => el("tr", { "data-position": d.position },
        cell("webhook-id", d.webhookId, d.webhookId), cell("resource", d.resource, d.resource),
        cell("resource-id", d.resourceId, d.resourceId), cell("attempts", d.attempts, d.attempts),
        cell("dead-at", d.deadAt, time(d.deadAt)), cell("last-error", d.lastError, d.lastError || "—")))));
    return el("section", {}, el("h2", {}, "Forwarding (loops-sync forward retry --dead sends dead changes again)"), summary, table);
  }

  let timer;
  async function refresh() {
    const banner = document.getElementById("banner");
    const url = api + "?sort=" + view.sort + "&limit=" + PAGE + "&offset=" + view.offset;
    clearTimeout(timer);
    try {
      const res = await fetch(url, { cache: "no-store", headers: { accept: "application/json" } });
      if (!res.ok) throw new Error("status API answered " + res.status);
      const s = await res.json();
      root.replaceChildren(tiles(s), pauses(s), setAside(s), chart(s), ticks(s), webhookDelivery(s), changeFeed(s), consumers(s), forwarding(s), merchants(s), failedJobs(s));
      document.getElementById("generated").textContent = "as of " + time(s.generatedAt);
      banner.hidden = true;
      document.body.dataset.generatedAt = s.generatedAt;
    } catch (e) {
      banner.textContent = "Cannot refresh: " + e.message + " (showing the last figures)";
      banner.hidden = false;
    } finally {
      timer = setTimeout(refresh, refreshMs);
    }
  }
  refresh();
})();
`;
