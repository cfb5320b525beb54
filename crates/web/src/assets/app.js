// ask-user web page. Vanilla JS, no dependencies.
// Model text (questions, headers, labels, descriptions) is untrusted: it is only ever put on the
// page with textContent, as a property value, or as an attribute set through a property; never
// as HTML.
'use strict';

(function () {
  // The card itself (questions, options, collecting answers, the closed state) is cards.js,
  // shared with the hub's inbox (docs/contract.md §9).
  const cards = window.askUserCards;
  const batchesEl = document.getElementById('batches');
  const emptyEl = document.getElementById('empty');
  const statusEl = document.getElementById('status');

  // Identifies this tab in withdrawal events, so it can tell its own answer from another's.
  const tab = Array.from(crypto.getRandomValues(new Uint8Array(8)),
    (b) => b.toString(16).padStart(2, '0')).join('');

  // Shown on a card while its agent is not waiting (its call went away; the ask is kept for
  // the agent's retry). Our text: the server sends only a flag, never words.
  const CALLER_GONE = 'The agent stopped waiting. Your answer is kept and given to it when it asks again.';

  /** batch number -> { form, data, closed, sending, callerGone } */
  const shown = new Map();
  let connected = false;
  let everConnected = false;
  let ended = false;

  function openCount() {
    let n = 0;
    for (const b of shown.values()) if (!b.closed) n += 1;
    return n;
  }

  function openQuestions() {
    let n = 0;
    for (const b of shown.values()) if (!b.closed) n += b.data.questions.length;
    return n;
  }

  function refreshStatus() {
    const n = openCount();
    emptyEl.hidden = ended || !everConnected || shown.size > 0;
    document.title = n > 0 ? '(' + n + ') ask-user' : 'ask-user';
    if (ended) {
      statusEl.textContent = 'Done, you can close this tab.';
    } else if (!connected) {
      statusEl.textContent = everConnected
        ? 'Not connected (ask-user may have finished); retrying…'
        : 'Connecting…';
    } else if (n === 0) {
      statusEl.textContent = 'Connected';
    } else {
      const q = openQuestions();
      statusEl.textContent = q === 1 ? '1 question waiting' : q + ' questions waiting';
    }
  }

  /** Sends a submission; true only when the server took it as the outcome (200). A 409
   * means it was not taken (answered elsewhere, timed out, …): the card closes with the
   * server's reason and the unsent choices are cleared. Anything else keeps it open. */
  async function post(entry, path, body) {
    const err = entry.form.querySelector('.error');
    err.hidden = true;
    entry.sending = true;
    for (const b of entry.form.querySelectorAll('.actions button')) b.disabled = true;
    try {
      const response = await fetch(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
        cache: 'no-store',
      });
      if (response.ok) return true;
      const text = await response.text();
      if (response.status === 409) {
        close(entry, 'not-taken', null, null, text);
      } else {
        cards.showError(entry, text);
      }
    } catch (e) {
      cards.showError(entry, 'Could not reach ask-user: ' + e.message);
    } finally {
      entry.sending = false;
      for (const b of entry.form.querySelectorAll('.actions button')) b.disabled = entry.closed;
    }
    return false;
  }

  async function submit(entry) {
    if (entry.closed || entry.sending) return;
    const answers = cards.collect(entry);
    if (!answers) return;
    if (await post(entry, 'answer', { batch: entry.data.batch, answers: answers, tab: tab })) {
      close(entry, 'answered', tab, null, null);
    }
  }

  async function dismiss(entry) {
    if (entry.closed || entry.sending) return;
    // With answers or typed text in progress, the first press asks once more.
    if (!cards.confirmDismiss(entry.form)) return;
    if (await post(entry, 'dismiss', { batch: entry.data.batch, tab: tab })) {
      close(entry, 'dismissed', tab, null, null);
    }
  }

  /** Shows or hides the card's notice that the agent stopped waiting (`waiting` false). */
  function setCallerWaiting(entry, waiting) {
    entry.callerGone = waiting === false;
    const notice = entry.form.querySelector('.caller-gone');
    notice.textContent = CALLER_GONE;
    notice.hidden = entry.closed || !entry.callerGone;
    entry.form.classList.toggle('caller-gone-shown', !notice.hidden);
  }

  function addBatch(data) {
    const known = shown.get(data.batch);
    if (known) {
      if (!known.closed) setCallerWaiting(known, data.caller_waiting !== false);
      return;
    }
    const form = cards.buildCard(data);
    const dismissButton = form.querySelector('.dismiss');
    const entry = { form: form, data: data, closed: false, sending: false, callerGone: false };
    setCallerWaiting(entry, data.caller_waiting !== false);
    // The same question answered before: one tap sends that answer as this card's.
    cards.addSendAgain(form, data.questions, data.previous, async (answers) => {
      if (entry.closed || entry.sending) return;
      if (await post(entry, 'answer', { batch: data.batch, answers: answers, tab: tab })) {
        close(entry, 'answered', tab, null, null);
      }
    });
    form.addEventListener('submit', (e) => { e.preventDefault(); submit(entry); });
    dismissButton.addEventListener('click', () => dismiss(entry));
    form.querySelector('.hide').addEventListener('click', () => {
      shown.delete(data.batch);
      form.remove();
      refreshStatus();
    });
    shown.set(data.batch, entry);
    startCountdown(entry);
    batchesEl.appendChild(form);
    // Take the keyboard to the first open question unless the human is busy elsewhere.
    const active = document.activeElement;
    if (!active || active === document.body) {
      const first = form.querySelector('.choice:checked, .choice, .own-input');
      if (first) first.focus({ preventScroll: true });
    }
    refreshStatus();
  }

  /** Moves the keyboard to the first open card, if the focus was in `form` or nowhere. */
  function focusNextOpen(form) {
    const active = document.activeElement;
    if (active && active !== document.body && !form.contains(active)) return;
    for (const other of shown.values()) {
      if (other.closed) continue;
      const first = other.form.querySelector('.choice:checked, .choice:enabled, .own-input:enabled');
      if (first) { first.focus({ preventScroll: false }); return; }
    }
  }

  /** A countdown on the card while the agent's time budget runs (`deadline`: Unix ms). */
  function startCountdown(entry) {
    const deadline = entry.data.deadline;
    if (typeof deadline !== 'number') return;
    const el = entry.form.querySelector('.countdown');
    const tick = () => {
      const left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
      const m = Math.floor(left / 60);
      const sec = left % 60;
      el.textContent = 'Time left to answer: ' + (m > 0 ? m + ' min ' : '') + sec + ' s';
      el.classList.toggle('urgent', left <= 30);
    };
    tick();
    el.hidden = false;
    entry.timer = setInterval(tick, 1000);
  }

  function close(entry, reason, by, where, text) {
    if (entry.closed) return;
    entry.closed = true;
    if (entry.timer) clearInterval(entry.timer);
    entry.form.querySelector('.countdown').hidden = true;
    let kind = cards.KIND[reason] || reason;
    if (reason === 'answered' || reason === 'dismissed') {
      kind = reason + (by === tab ? '-here' : '-elsewhere');
    }
    const form = entry.form;
    cards.closeCard(form, kind, where, text);
    form.classList.remove('caller-gone-shown');
    // Sent while the agent was not waiting: kept for its retry, not read yet.
    if (kind === 'answered-here' && entry.callerGone) {
      cards.setClosedText(form, 'kept-here');
    }
    focusNextOpen(form);
    refreshStatus();
  }

  function onSnapshot(data) {
    const live = new Set(data.batches.map((b) => b.batch));
    for (const [no, entry] of shown) {
      if (!entry.closed && !live.has(no)) close(entry, 'gone', null, null, null);
    }
    data.batches.forEach(addBatch);
  }

  function onWithdrawn(data) {
    const entry = shown.get(data.batch);
    if (entry) close(entry, data.reason, data.by, typeof data.where === 'string' ? data.where : null, null);
  }

  function parse(e) {
    try { return JSON.parse(e.data); } catch (_) { return null; }
  }

  const source = new EventSource('events');
  source.addEventListener('open', () => { connected = true; everConnected = true; refreshStatus(); });
  source.addEventListener('error', () => { connected = false; refreshStatus(); });
  source.addEventListener('snapshot', (e) => {
    const d = parse(e);
    connected = true;
    everConnected = true;
    if (d) onSnapshot(d);
    refreshStatus();
  });
  source.addEventListener('opened', (e) => { const d = parse(e); if (d) addBatch(d); });
  source.addEventListener('withdrawn', (e) => { const d = parse(e); if (d) onWithdrawn(d); });
  source.addEventListener('caller', (e) => {
    const d = parse(e);
    const entry = d && shown.get(d.batch);
    if (entry && !entry.closed) setCallerWaiting(entry, d.caller_waiting !== false);
  });
  // The server is stopping (its ask is over): stop reconnecting to a server that is gone.
  source.addEventListener('ended', () => {
    source.close();
    ended = true;
    connected = false;
    for (const entry of shown.values()) {
      if (!entry.closed) close(entry, 'stopped', null, null, null);
    }
    emptyEl.hidden = true;
    refreshStatus();
  });
  // For the page's tests: the sanitiser, checked in Chromium against the terminal's rule.
  window.askUserInert = cards.inert;
  refreshStatus();
}());
