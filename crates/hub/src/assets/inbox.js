// The hub's inbox page (docs/contract.md §9). Model text is untrusted: it only ever reaches
// the page through textContent, never as markup. No inline script (the CSP forbids it).
"use strict";

const cards = new Map(); // ask id -> card element (kept across updates: typed answers survive)
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
  card.append(meta);
  const questions = Array.isArray(ask.questions) ? ask.questions : [];
  questions.forEach((q, qi) => {
    const box = el("fieldset", "q");
    box.dataset.qid = q.id;
    box.style.border = "0";
    if (q.header) box.append(el("span", "chip", q.header));
    box.append(el("div", "qtext", q.question));
    const name = "a" + ask.id + "q" + qi;
    (q.options || []).forEach((o) => {
      const lab = el("label", "opt");
      const input = document.createElement("input");
      input.type = q.multi_select ? "checkbox" : "radio";
      input.name = name;
      input.value = o.label;
      const text = el("span", null, o.label);
      if (o.description) text.append(el("span", "desc", o.description));
      lab.append(input, text);
      box.append(lab);
    });
    const own = el("input", "own");
    own.type = "text";
    own.placeholder = "Your own answer";
    own.setAttribute("aria-label", "Your own answer to: " + q.question);
    box.append(own);
    const skip = el("button", "quiet skip", "Skip");
    skip.type = "button";
    skip.addEventListener("click", () => {
      box.querySelectorAll("input").forEach((i) => { if (i.type === "text") i.value = ""; else i.checked = false; });
    });
    box.append(skip);
    card.append(box);
  });
  const actions = el("div", "actions");
  const send = el("button", "primary send", "Send");
  send.type = "button";
  const dismiss = el("button", "dismiss", "Dismiss");
  dismiss.type = "button";
  const note = el("span", "note");
  note.setAttribute("role", "status");
  actions.append(send, dismiss, note);
  card.append(actions);
  send.addEventListener("click", async () => {
    const answers = [];
    card.querySelectorAll("fieldset.q").forEach((box) => {
      const selected = [];
      let custom = null;
      box.querySelectorAll("input").forEach((i) => {
        if (i.type === "text") { if (i.value.trim()) custom = i.value; } else if (i.checked) selected.push(i.value);
      });
      const item = { id: box.dataset.qid, selected };
      if (custom !== null) item.custom = custom;
      answers.push(item);
    });
    await settle(card, note, "/inbox/asks/" + ask.id + "/answer", { answers });
  });
  dismiss.addEventListener("click", () => settle(card, note, "/inbox/asks/" + ask.id + "/dismiss", {}));
  return card;
}

async function settle(card, note, path, body) {
  card.querySelectorAll("button").forEach((b) => { b.disabled = true; });
  note.textContent = "sending…";
  let r;
  try { r = await post(path, body); } catch (_) { r = { status: 0, data: {} }; }
  if (r.status === 200 && r.data.sent) {
    note.textContent = "sent";
    card.classList.add("done");
    const agent = card.dataset.agent || "the agent";
    document.getElementById("flash").textContent = "sent to " + agent;
    refresh();
    return;
  }
  if (r.status === 409 && r.data.counted) {
    note.textContent = r.data.error + ": " + summary(r.data.counted);
  } else {
    note.textContent = (r.data && r.data.error) || "not sent: the hub did not answer; try again";
  }
  card.querySelectorAll("button").forEach((b) => { b.disabled = false; });
}

function render(state) {
  const open = document.getElementById("open");
  const seen = new Set();
  // Grouped by agent; groups ordered by their newest ask; asks newest first.
  const groups = new Map();
  for (const ask of state.open) {
    const agent = ask.agent || "unknown agent";
    if (!groups.has(agent)) groups.set(agent, []);
    groups.get(agent).push(ask);
  }
  const nodes = [];
  for (const [agent, asks] of groups) {
    const h = el("h2", "agent");
    h.append(el("strong", null, agent), el("span", null, asks.length === 1 ? "1 question" : asks.length + " questions"));
    nodes.push(h);
    for (const ask of asks) {
      seen.add(ask.id);
      let card = cards.get(ask.id);
      if (!card) { card = buildCard(ask); cards.set(ask.id, card); }
      const badge = card.querySelector(".detached");
      if (badge) badge.hidden = ask.attached;
      nodes.push(card);
    }
  }
  for (const [id] of cards) if (!seen.has(id)) cards.delete(id);
  open.replaceChildren(...nodes);
  document.getElementById("empty").hidden = state.open.length > 0;
  const hist = document.getElementById("history");
  hist.replaceChildren(...state.history.map((ask) => {
    const li = el("li");
    li.append(el("span", "st", summary(ask)), document.createTextNode(" — " + (ask.agent || "?") + ": "));
    const qs = Array.isArray(ask.questions) ? ask.questions.map((q) => q.question).join(" / ") : "";
    li.append(document.createTextNode(qs + " (" + ago(ask.closed_at || ask.created_at) + ")"));
    return li;
  }));
  document.querySelectorAll("time.when").forEach((t) => { t.textContent = ago(Number(t.dataset.ms)); });
}

async function refresh() {
  if (refreshing) { again = true; return; }
  refreshing = true;
  try {
    const r = await fetch("/inbox/state", { credentials: "same-origin" });
    if (r.status === 401) { window.location.reload(); return; }
    if (r.ok) render(await r.json());
  } catch (_) { /* the event stream reconnects and triggers another refresh */ }
  refreshing = false;
  if (again) { again = false; refresh(); }
}

function connect() {
  const status = document.getElementById("status");
  const es = new EventSource("/inbox/events");
  es.addEventListener("change", () => { status.textContent = "live"; refresh(); });
  es.onerror = () => { status.textContent = "reconnecting…"; };
}

document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("logout").addEventListener("click", async () => {
    await post("/logout", {});
    window.location.reload();
  });
  connect();
  refresh();
  setInterval(() => document.querySelectorAll("time.when").forEach((t) => { t.textContent = ago(Number(t.dataset.ms)); }), 30000);
});
