// The hub's inbox page (docs/contract.md §9). The cards are the local page's (cards.js,
// served from ask_user_web::cards): the same card UI, keys and rules. This script only adds
// what the inbox has around them: who asks, grouping by agent, the history.
// Model and caller text is untrusted: it only ever reaches the page through textContent (and
// the cards' sanitiser), never as markup. No inline script (the CSP forbids it).
//
// Order: asks are grouped by agent; within a group the oldest waiting ask comes first, and the
// groups are ordered by their oldest waiting ask when the page first sees them (the agent
// waiting longest on top). A new ask is the newest, so it only ever goes to the end of its
// group, or a new group at the end: nothing on screen moves for an arrival, and the scroll is
// anchored to the card at the top of the screen whatever changes above it. Each group shows
// its first PER_GROUP open asks and a button for the rest, with the true counts. The page reads
// up to WINDOW_MAX open asks (newest first from the hub); "Show more" reads older ones.
"use strict";

(function () {
  const cards = window.askUserCards;
  const PER_GROUP = 3;
  const WINDOW_MAX = 500; // the hub's cap on one read (OPEN_PAGE_MAX)
  const HISTORY_LEN = 50; // closed asks the hub's state read gives

  /** ask id -> { ask, card, entry, shown } (kept across updates: typed answers survive) */
  const asks = new Map();
  /** agent -> { header, toggle, count, list, more, collapsed, all } in page order */
  const groups = new Map();
  let total = 0;
  let more = false;
  let history = [];
  let refreshing = false;
  let again = false;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) {
      e.textContent = String(text);
      e.dir = "auto"; // laid out by its own first strong character (right-to-left text)
    }
    return e;
  }

  function ago(ms) {
    const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (s < 60) return s + " s ago";
    if (s < 3600) return Math.round(s / 60) + " min ago";
    if (s < 86400) return Math.round(s / 3600) + " h ago";
    return new Date(ms).toLocaleString();
  }

  // Caller and answer text comes prepared by the server's text rule (`ask.shown`, as the
  // questions' `shown`): this page applies no rule of its own.
  const agentOf = (ask) => (ask.shown && ask.shown.agent) || "unknown agent";
  const questionsOf = (ask) => (Array.isArray(ask.questions) ? ask.questions : []);

  /** A fresh idempotency id: one per act of the human's, sent again on each retry of it, so
   * a retry whose first try was taken (its response lost) is told "sent". */
  function submissionId() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  }

  async function post(path, body, key) {
    const headers = { "Content-Type": "application/json" };
    if (key) headers["Idempotency-Key"] = key;
    const r = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers,
      body: JSON.stringify(body || {}),
    });
    let data = {};
    try { data = await r.json(); } catch (_) { /* empty */ }
    return { status: r.status, data };
  }

  /** Who closed an ask, in words ("the terminal", "the inbox"…); null when unknown. */
  function answerer(view) {
    const name = view.shown && view.shown.by;
    if (!name) return null;
    return name === "hub" ? "the inbox" : name;
  }

  /** What an ask's outcome was, in words, with the questions' labels (never their ids). */
  function summary(view) {
    const questions = questionsOf(view);
    if (view.state === "answered" && view.shown && view.shown.answers) {
      return view.shown.answers.map((a) => {
        const q = questions.find((x) => x.id === a.id);
        const parts = a.selected.slice();
        if (a.custom) parts.push("“" + a.custom + "”");
        const what = parts.length ? parts.join(", ") : "skipped";
        return questions.length === 1 ? what : (q ? cards.shortName(q) : "?") + ": " + what;
      }).join("; ");
    }
    return "";
  }

  const STATE = {
    answered: ["✔", "answered"],
    dismissed: ["✕", "dismissed"],
    timed_out: ["◷", "timed out"],
    withdrawn: ["⊘", "withdrawn by the agent"],
    revoked: ["⊘", "closed: the agent's token was revoked"],
  };

  /** What a card closed by its agent's revoked token says (cards.js has no such kind). */
  const REVOKED_TEXT = "Closed: this agent's token was revoked, so no answer reaches it. Nothing was sent.";

  /** The card kind (cards.js) for an ask that closed elsewhere. */
  function closedKind(view) {
    return {
      answered: "answered-other", dismissed: "dismissed-other",
      timed_out: "timed-out", withdrawn: "cancelled",
    }[view.state] || "gone";
  }

  /** A countdown on the card while the agent's time budget runs (`deadline`: Unix ms, as the
   * local page shows it); it stops when the card closes, the typed text staying. */
  function startCountdown(entry) {
    const el = entry.form.querySelector(".countdown");
    const tick = () => {
      const deadline = entry.data.deadline;
      if (typeof deadline !== "number" || entry.closed) { el.hidden = true; return; }
      const left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
      const m = Math.floor(left / 60);
      const sec = left % 60;
      el.textContent = "Time left to answer: " + (m > 0 ? m + " min " : "") + sec + " s";
      el.classList.toggle("urgent", left <= 30);
      el.hidden = false;
    };
    tick();
    entry.timer = setInterval(tick, 1000);
  }

  /** Closes a card (cards.js) and stops its countdown. */
  function closeEntry(entry, kind, where, text) {
    entry.closed = true;
    if (entry.timer) clearInterval(entry.timer);
    entry.form.querySelector(".countdown").hidden = true;
    cards.closeCard(entry.form, kind, where, text);
  }

  /** Sends the card's answer or dismissal: the card closes as the hub says. */
  async function settle(item, path, body, sentKind) {
    const entry = item.entry;
    if (entry.closed || entry.sending) return;
    entry.sending = true;
    entry.form.querySelector(".error").hidden = true;
    for (const b of entry.form.querySelectorAll(".actions button, .quick, .send-again")) b.disabled = true;
    // The same id on every try of this card's submission (a click again after "try again").
    if (!entry.submission) entry.submission = submissionId();
    entry.sentKind = sentKind;
    let r;
    try { r = await post(path, body, entry.submission); } catch (_) { r = { status: 0, data: {} }; }
    entry.sending = false;
    // Closed meanwhile by the live stream, which said what happened (this submission taken:
    // "sent", see closeGone).
    if (entry.closed) return;
    if (r.status === 200 && r.data.sent) {
      entry.here = true;
      closeEntry(entry, sentKind, null, null);
      if (entry.sentAgain) {
        // Sent again: the list says what was sent, not what the card's choices held.
        const list = entry.form.querySelector(".sent");
        list.querySelector("ol").replaceChildren(...entry.sentAgain.map((t) => el("li", null, t)));
        list.hidden = false;
      }
      document.getElementById("flash").textContent = "sent to " + agentOf(item.ask);
      refresh();
      return;
    }
    if (r.status === 409 && r.data.counted) {
      const counted = Object.assign({ questions: item.ask.questions }, r.data.counted);
      const what = summary(counted);
      closeEntry(entry, "not-taken", null, r.data.error + (what ? ": " + what : ""));
      if (counted.state === "revoked") entry.form.querySelector(".closed-text").textContent = REVOKED_TEXT;
      render();
      return;
    }
    cards.showError(entry, (r.data && r.data.error) || "not sent: the hub did not answer; try again");
    for (const b of entry.form.querySelectorAll(".actions button, .quick, .send-again")) b.disabled = false;
  }

  /** One-tap answers: on a card with one single-select question, each option has a Send
   * button (pointer only; the keyboard answers with the arrows and Enter, as everywhere). */
  function addQuickSend(form, questions) {
    if (questions.length !== 1 || questions[0].multi_select || questions[0].options.length === 0) return;
    for (const option of form.querySelectorAll(".option")) {
      const input = option.querySelector(".choice");
      const b = el("button", "quick", "Send");
      b.type = "button";
      b.tabIndex = -1;
      b.setAttribute("aria-label", "Send " + option.querySelector(".label").textContent);
      b.addEventListener("click", (e) => {
        e.preventDefault();
        input.checked = true;
        for (const t of form.querySelectorAll(".own-input")) t.value = "";
        form.requestSubmit();
      });
      option.querySelector(".label-line").append(b);
    }
  }

  /** The same question answered before (same agent, same request; the answer delivered):
   * one tap sends that answer again to this ask — the human's own act, never done for them. */
  function addSendAgain(item, entry) {
    cards.addSendAgain(entry.form, questionsOf(item.ask), item.ask.previous, (answers, sent) => {
      if (entry.closed || entry.sending) return;
      entry.sentAgain = sent;
      settle(item, "/inbox/asks/" + item.ask.id + "/answer", { answers: answers }, "answered-here");
    });
  }

  function buildCard(item) {
    const ask = item.ask;
    const card = el("article", "card");
    card.dataset.id = ask.id;
    card.dataset.agent = ask.agent || "";
    const meta = el("div", "meta");
    const shown = ask.shown || {};
    if (shown.project) meta.append(el("span", "project", shown.project));
    if (shown.host) meta.append(el("span", "host", "on " + shown.host));
    if (shown.session) meta.append(el("span", "session", shown.session));
    const when = el("time", "when", ago(ask.created_at));
    when.dataset.ms = ask.created_at;
    meta.append(when);
    const detached = el("span", "badge detached", "agent stopped waiting — your answer is kept");
    detached.hidden = ask.attached;
    meta.append(detached);
    const questions = questionsOf(ask);
    const form = cards.buildCard({ batch: ask.id, questions });
    const entry = { form, data: { batch: ask.id, questions, deadline: ask.deadline }, closed: false, sending: false };
    startCountdown(entry);
    addSendAgain(item, entry);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      if (entry.closed || entry.sending) return;
      const answers = cards.collect(entry);
      if (!answers) return;
      settle(item, "/inbox/asks/" + ask.id + "/answer", { answers }, "answered-here");
    });
    form.querySelector(".dismiss").addEventListener("click", () => {
      if (!cards.confirmDismiss(form)) return;
      settle(item, "/inbox/asks/" + ask.id + "/dismiss", {}, "dismissed-here");
    });
    form.querySelector(".hide").addEventListener("click", () => {
      asks.delete(ask.id);
      render();
    });
    addQuickSend(form, questions);
    card.append(meta, form);
    item.card = card;
    item.entry = entry;
  }

  function group(agent) {
    let g = groups.get(agent);
    if (g) return g;
    const header = el("h2", "agent");
    const toggle = el("button", "group-toggle");
    toggle.type = "button";
    toggle.setAttribute("aria-expanded", "true");
    const name = el("strong", null, agent);
    const count = el("span", "group-count");
    const age = el("span", "group-age");
    toggle.append(name, count, age);
    header.append(toggle);
    const list = el("div", "group-cards");
    const moreButton = el("button", "group-more");
    moreButton.type = "button";
    g = { header, toggle, count, age, list, more: moreButton, collapsed: false, all: false };
    toggle.addEventListener("click", () => {
      g.collapsed = !g.collapsed;
      render();
    });
    moreButton.addEventListener("click", () => {
      g.all = !g.all;
      render();
    });
    groups.set(agent, g);
    return g;
  }

  /** Puts `nodes` into `parent` in this order, moving only what must move (a focused field
   * that stays in place keeps the keyboard and its text). */
  function place(parent, nodes) {
    let cur = parent.firstChild;
    for (const node of nodes) {
      if (node === cur) { cur = cur.nextSibling; continue; }
      parent.insertBefore(node, cur);
    }
    while (cur) { const next = cur.nextSibling; cur.remove(); cur = next; }
  }

  /** The card (or group header) at the top of the screen and where it is, to keep it there. */
  function anchor() {
    for (const e of document.querySelectorAll("#open article.card, #open h2.agent")) {
      const r = e.getBoundingClientRect();
      if (r.bottom > 0) return { e, top: r.top };
    }
    return null;
  }

  function render() {
    const keep = anchor();
    const byAgent = new Map();
    for (const item of [...asks.values()].sort((a, b) => a.ask.id - b.ask.id)) {
      const agent = agentOf(item.ask);
      if (!byAgent.has(agent)) byAgent.set(agent, []);
      byAgent.get(agent).push(item);
    }
    // Groups keep the order the page first gave them (by oldest waiting ask).
    for (const agent of byAgent.keys()) group(agent);
    const nodes = [];
    let waiting = 0;
    for (const [agent, g] of groups) {
      const items = byAgent.get(agent);
      if (!items) { groups.delete(agent); continue; }
      const open = items.filter((i) => !i.entry || !i.entry.closed);
      const questions = open.reduce((n, i) => n + questionsOf(i.ask).length, 0);
      waiting += open.length;
      g.count.textContent = open.length === 0 ? "nothing waiting"
        : (open.length === 1 ? "1 ask" : open.length + " asks")
          + (questions !== open.length ? ", " + questions + " questions" : "") + " waiting";
      g.age.textContent = open.length ? "oldest " + ago(open[0].ask.created_at) : "";
      g.toggle.setAttribute("aria-expanded", g.collapsed ? "false" : "true");
      nodes.push(g.header);
      const shown = [];
      let openShown = 0;
      for (const item of items) {
        const isOpen = !item.entry || !item.entry.closed;
        if (!item.shown && !(g.all || (isOpen && openShown < PER_GROUP))) continue;
        if (!item.card) buildCard(item);
        item.shown = true;
        if (isOpen) openShown += 1;
        shown.push(item.card);
      }
      const hiddenOpen = open.filter((i) => !i.shown).length;
      if (hiddenOpen > 0) {
        g.more.textContent = "Show " + hiddenOpen + " more from " + agent;
        shown.push(g.more);
      } else if (g.all && open.length > PER_GROUP) {
        g.more.textContent = "Show fewer from " + agent;
        shown.push(g.more);
      }
      place(g.list, shown);
      g.list.hidden = g.collapsed;
      nodes.push(g.list);
    }
    place(document.getElementById("open"), nodes);
    if (keep && keep.e.isConnected) {
      const moved = keep.e.getBoundingClientRect().top - keep.top;
      if (moved !== 0) window.scrollBy(0, moved);
    }
    document.getElementById("empty").hidden = asks.size > 0 || total > 0;
    document.getElementById("counts").textContent = total === 0 ? ""
      : total + " open" + (waiting < total ? ", " + waiting + " loaded (the newest)" : "");
    document.getElementById("more").hidden = !more;
    document.title = total > 0 ? "(" + total + ") ask-user hub" : "ask-user hub — inbox";
    document.querySelectorAll("time.when").forEach((t) => { t.textContent = ago(Number(t.dataset.ms)); });
  }

  function renderHistory() {
    const hist = document.getElementById("history");
    hist.replaceChildren(...history.map((ask) => {
      const li = el("li");
      const [icon, word] = STATE[ask.state] || ["·", String(ask.state)];
      const by = answerer(ask);
      li.append(el("span", "st", icon + " " + word + (by ? " in " + by : "")));
      li.append(document.createTextNode(" — " + agentOf(ask) + " (" + ago(ask.closed_at || ask.created_at) + "): "));
      li.append(document.createTextNode(questionsOf(ask).map(cards.shortName).join(" / ")));
      const what = summary(ask);
      if (what) li.append(el("span", "sent-what", " → " + what));
      return li;
    }));
  }

  /** Takes in `open` (newest first). `covered`: every open ask with an id at or above it is
   * in `open`, so a loaded ask in that range that is not listed has closed; `null` for a page
   * of older asks. */
  function merge(open, covered) {
    const listed = new Set();
    for (const ask of open) {
      listed.add(ask.id);
      const item = asks.get(ask.id);
      if (!item) { asks.set(ask.id, { ask, card: null, entry: null, shown: false }); continue; }
      item.ask = ask;
      if (item.entry) item.entry.data.deadline = ask.deadline;
      const badge = item.card && item.card.querySelector(".detached");
      if (badge) badge.hidden = ask.attached;
    }
    if (covered === null) return;
    for (const [id, item] of asks) {
      if (id < covered || listed.has(id)) continue;
      closeGone(id, item);
    }
  }

  /** A loaded ask that is no longer open: closed in place, saying how when the history knows. */
  function closeGone(id, item) {
    if (item.entry && item.entry.closed) return; // closed in place already
    if (!item.shown) { asks.delete(id); return; }
    const view = history.find((h) => h.id === id);
    // This page's own submission closed it (its response lost or not here yet): "sent".
    if (view && view.submission && item.entry.submission === view.submission) {
      item.entry.here = true;
      closeEntry(item.entry, item.entry.sentKind || "answered-here", null, null);
      document.getElementById("flash").textContent = "sent to " + agentOf(item.ask);
      return;
    }
    closeEntry(item.entry, view ? closedKind(view) : "gone", view ? answerer(view) : null, null);
    if (view && view.state === "revoked") {
      item.entry.form.querySelector(".closed-icon").textContent = STATE.revoked[0];
      item.entry.form.querySelector(".closed-text").textContent = REVOKED_TEXT;
    }
  }

  /** Applies the change of one ask (the live event names it): reads only that ask. A full
   * read under way may predate the change, so it reads again once done. */
  async function changed(id) {
    if (refreshing) { again = true; return; }
    let data = null;
    try {
      const r = await fetch("/inbox/asks/" + id, { credentials: "same-origin" });
      if (r.status === 401) { window.location.reload(); return; }
      if (r.status === 404) return; // purged: nothing to show
      data = r.ok ? await r.json() : null;
    } catch (_) { data = null; }
    if (!data || refreshing) { refresh(); return; }
    const ask = data.ask;
    total = data.open_total;
    const loaded = [...asks.keys()];
    if (ask.state === "open") {
      // An open ask older than the loaded window stays for "Show more" (only counted).
      if (asks.has(ask.id) || !more || !loaded.length || ask.id > Math.min(...loaded)) {
        merge([ask], null);
      }
    } else {
      const at = history.findIndex((h) => h.id === ask.id);
      if (at >= 0) history[at] = ask; else history = [ask, ...history].slice(0, HISTORY_LEN);
      const item = asks.get(ask.id);
      if (item) closeGone(ask.id, item);
    }
    render();
    renderHistory();
  }

  async function read(query) {
    const r = await fetch("/inbox/state" + query, { credentials: "same-origin" });
    if (r.status === 401) { window.location.reload(); return null; }
    return r.ok ? r.json() : null;
  }

  /** Re-reads the open asks (the newest WINDOW_MAX, down to the oldest loaded one). */
  async function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = true;
    try {
      const loaded = [...asks.keys()];
      const floor = loaded.length ? Math.min(...loaded) : -Infinity;
      const state = await read("?limit=" + WINDOW_MAX);
      if (state) {
        total = state.open_total;
        history = state.history;
        const inside = state.open.filter((a) => a.id >= floor);
        const reachedFloor = inside.length < state.open.length || !state.more;
        const covered = reachedFloor ? floor
          : (state.open.length ? state.open[state.open.length - 1].id : floor);
        merge(inside, covered);
        more = state.more || inside.length < state.open.length;
        render();
        renderHistory();
      }
    } catch (_) { /* the event stream reconnects and triggers another refresh */ }
    refreshing = false;
    if (again) { again = false; refresh(); }
  }

  async function showMore() {
    const button = document.getElementById("more");
    const ids = [...asks.keys()];
    if (ids.length === 0) { refresh(); return; }
    button.disabled = true;
    try {
      const state = await read("?limit=" + WINDOW_MAX + "&before=" + Math.min(...ids));
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
    es.addEventListener("change", (e) => {
      status.textContent = "live";
      const id = Number(e.data);
      if (Number.isSafeInteger(id) && id > 0) changed(id); else refresh();
    });
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
