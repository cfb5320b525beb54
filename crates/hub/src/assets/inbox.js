// The hub's inbox page (docs/contract.md §9). The cards are the local page's (cards.js,
// served from ask_user_web::cards): the same card UI, keys and rules. This script only adds
// what the inbox has around them: who asks, grouping by agent, paging, the history.
// Model text is untrusted: it only ever reaches the page through textContent, never as
// markup. No inline script (the CSP forbids it).
//
// Paging: the first read shows the newest PAGE open asks; "Show more" adds the next PAGE
// older ones (keyset: ?before=<oldest shown id>). A live change re-reads from the newest down
// to the oldest shown ask (see refresh): new asks come in on top, closed ones close in place. Grouping: the shown asks are grouped by agent, groups ordered by their newest
// shown ask; loading older asks only adds to groups or adds groups after them, so nothing
// already on screen moves up.
"use strict";

(function () {
  const cards = window.askUserCards;
  const PAGE = 50;
  const WINDOW_MAX = 500; // the hub's cap on one read (OPEN_PAGE_MAX)

  /** ask id -> { ask, card, entry } (kept across updates: typed answers survive) */
  const shown = new Map();
  let total = 0;
  let more = false;
  let refreshing = false;
  let again = false;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function ago(ms) {
    const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (s < 60) return s + " s ago";
    if (s < 3600) return Math.round(s / 60) + " min ago";
    if (s < 86400) return Math.round(s / 3600) + " h ago";
    return new Date(ms).toLocaleString();
  }

  async function post(path, body) {
    const r = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body || {}),
    });
    let data = {};
    try { data = await r.json(); } catch (_) { /* empty */ }
    return { status: r.status, data };
  }

  function summary(view) {
    if (view.state === "answered" && view.answers) {
      return view.answers.answers.map((a) => {
        const parts = a.selected.slice();
        if (a.custom) parts.push("“" + a.custom + "”");
        return a.id + ": " + (parts.length ? parts.join(", ") : "skipped");
      }).join("; ");
    }
    return view.state.replace("_", " ");
  }

  /** Sends the card's answer or dismissal: the card closes as the hub says. */
  async function settle(item, path, body, sentKind) {
    const entry = item.entry;
    if (entry.closed || entry.sending) return;
    entry.sending = true;
    entry.form.querySelector(".error").hidden = true;
    for (const b of entry.form.querySelectorAll(".actions button")) b.disabled = true;
    let r;
    try { r = await post(path, body); } catch (_) { r = { status: 0, data: {} }; }
    entry.sending = false;
    if (r.status === 200 && r.data.sent) {
      entry.closed = true;
      entry.here = true;
      cards.closeCard(entry.form, sentKind, null, null);
      document.getElementById("flash").textContent = "sent to " + (item.ask.agent || "the agent");
      refresh();
      return;
    }
    if (r.status === 409 && r.data.counted) {
      entry.closed = true;
      cards.closeCard(entry.form, "not-taken", null, r.data.error + ": " + summary(r.data.counted));
      render();
      return;
    }
    cards.showError(entry, (r.data && r.data.error) || "not sent: the hub did not answer; try again");
    for (const b of entry.form.querySelectorAll(".actions button")) b.disabled = false;
  }

  function buildCard(ask) {
    const card = el("article", "card");
    card.dataset.id = ask.id;
    card.dataset.agent = ask.agent || "";
    const meta = el("div", "meta");
    if (ask.project) meta.append(el("span", "project", ask.project));
    if (ask.host) meta.append(el("span", "host", "on " + ask.host));
    if (ask.session) meta.append(el("span", "session", ask.session));
    const when = el("time", "when", ago(ask.created_at));
    when.dataset.ms = ask.created_at;
    meta.append(when);
    const detached = el("span", "badge detached", "agent stopped waiting");
    detached.hidden = ask.attached;
    meta.append(detached);
    const questions = Array.isArray(ask.questions) ? ask.questions : [];
    const form = cards.buildCard({ batch: ask.id, questions });
    const entry = { form, data: { batch: ask.id, questions }, closed: false, sending: false };
    const item = { ask, card, entry };
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      if (entry.closed || entry.sending) return;
      const answers = cards.collect(entry);
      if (!answers) return;
      settle(item, "/inbox/asks/" + ask.id + "/answer", { answers }, "answered-here");
    });
    form.querySelector(".dismiss").addEventListener("click",
      () => settle(item, "/inbox/asks/" + ask.id + "/dismiss", {}, "dismissed-here"));
    form.querySelector(".hide").addEventListener("click", () => {
      shown.delete(ask.id);
      render();
    });
    card.append(meta, form);
    return item;
  }

  function openShown() {
    let n = 0;
    for (const item of shown.values()) if (!item.entry.closed) n += 1;
    return n;
  }

  function render() {
    const ids = [...shown.keys()].sort((a, b) => b - a);
    const groups = new Map();
    for (const id of ids) {
      const item = shown.get(id);
      const agent = item.ask.agent || "unknown agent";
      if (!groups.has(agent)) groups.set(agent, []);
      groups.get(agent).push(item);
    }
    const nodes = [];
    for (const [agent, items] of groups) {
      const open = items.filter((i) => !i.entry.closed).length;
      const h = el("h2", "agent");
      h.append(el("strong", null, agent), el("span", null, open === 1 ? "1 question" : open + " questions"));
      nodes.push(h);
      for (const item of items) nodes.push(item.card);
    }
    document.getElementById("open").replaceChildren(...nodes);
    const n = openShown();
    document.getElementById("empty").hidden = shown.size > 0 || total > 0;
    document.getElementById("counts").textContent = total === 0 ? ""
      : total + " open" + (n < total ? ", showing " + n : "");
    document.getElementById("more").hidden = !more;
    document.title = total > 0 ? "(" + total + ") ask-user hub" : "ask-user hub — inbox";
    document.querySelectorAll("time.when").forEach((t) => { t.textContent = ago(Number(t.dataset.ms)); });
  }

  function renderHistory(history) {
    const hist = document.getElementById("history");
    hist.replaceChildren(...history.map((ask) => {
      const li = el("li");
      li.append(el("span", "st", summary(ask)), document.createTextNode(" — " + (ask.agent || "?") + ": "));
      const qs = Array.isArray(ask.questions) ? ask.questions.map((q) => q.question).join(" / ") : "";
      li.append(document.createTextNode(qs + " (" + ago(ask.closed_at || ask.created_at) + ")"));
      return li;
    }));
  }

  /** Takes in `open` (newest first). `covered`: every open ask with an id at or above it is
   * in `open` (a re-read from the newest), so a shown card in that range that is not listed
   * left the open list; `null` for a page of older asks. */
  function merge(open, covered) {
    const listed = new Set();
    for (const ask of open) {
      listed.add(ask.id);
      let item = shown.get(ask.id);
      if (!item) { item = buildCard(ask); shown.set(ask.id, item); }
      item.ask = ask;
      const badge = item.card.querySelector(".detached");
      if (badge) badge.hidden = ask.attached;
    }
    if (covered === null) return;
    for (const [id, item] of shown) {
      if (id < covered || listed.has(id)) continue;
      if (item.entry.here) { shown.delete(id); continue; } // sent from here: see the flash
      if (!item.entry.closed) {
        // Answered elsewhere, dismissed or withdrawn: closed in place, as on the local page.
        item.entry.closed = true;
        cards.closeCard(item.entry.form, "gone", null, null);
      }
    }
  }

  async function read(query) {
    const r = await fetch("/inbox/state" + query, { credentials: "same-origin" });
    if (r.status === 401) { window.location.reload(); return null; }
    return r.ok ? r.json() : null;
  }

  /** Re-reads the open asks from the newest down to the oldest shown one (the window is
   * fixed by that ask, not by a count: asks closing never pull older ones in, new ones come
   * in on top). One read of at most WINDOW_MAX asks: when more than that are newer than the
   * oldest shown, the shown cards below the read stay as they are. */
  async function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = true;
    try {
      const floor = shown.size ? Math.min(...shown.keys()) : -Infinity;
      const limit = Math.min(WINDOW_MAX, openShown() + PAGE);
      const state = await read("?limit=" + limit);
      if (state) {
        total = state.open_total;
        const inside = state.open.filter((a) => a.id >= floor);
        const reachedFloor = inside.length < state.open.length || !state.more;
        const covered = reachedFloor ? floor
          : (state.open.length ? state.open[state.open.length - 1].id : floor);
        merge(inside, covered);
        more = state.more || inside.length < state.open.length;
        render();
        renderHistory(state.history);
      }
    } catch (_) { /* the event stream reconnects and triggers another refresh */ }
    refreshing = false;
    if (again) { again = false; refresh(); }
  }

  async function showMore() {
    const button = document.getElementById("more");
    const ids = [...shown.keys()];
    if (ids.length === 0) { refresh(); return; }
    button.disabled = true;
    try {
      const state = await read("?limit=" + PAGE + "&before=" + Math.min(...ids));
      if (state) {
        merge(state.open, null);
        more = state.more;
        render();
      }
    } catch (_) { /* the button stays for another try */ }
    button.disabled = false;
  }

  function connect() {
    const status = document.getElementById("status");
    const es = new EventSource("/inbox/events");
    es.addEventListener("change", () => { status.textContent = "live"; refresh(); });
    es.onerror = () => { status.textContent = "reconnecting…"; };
  }

  document.getElementById("logout").addEventListener("click", async () => {
    await post("/logout", {});
    window.location.reload();
  });
  document.getElementById("more").addEventListener("click", showMore);
  connect();
  refresh();
  setInterval(() => document.querySelectorAll("time.when").forEach((t) => { t.textContent = ago(Number(t.dataset.ms)); }), 30000);
}());
