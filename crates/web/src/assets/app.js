// ask-user web page. Vanilla JS, no dependencies.
// Model text (questions, headers, labels, descriptions) is untrusted: it is only ever put on the
// page with textContent, as a property value, or as an attribute set through a property; never
// as HTML.
'use strict';

(function () {
  const RECOMMENDED = '(Recommended)';
  const batchesEl = document.getElementById('batches');
  const emptyEl = document.getElementById('empty');
  const statusEl = document.getElementById('status');
  const tBatch = document.getElementById('t-batch');
  const tQuestion = document.getElementById('t-question');
  const tOption = document.getElementById('t-option');

  // Identifies this tab in withdrawal events, so it can tell its own answer from another's.
  const tab = Array.from(crypto.getRandomValues(new Uint8Array(8)),
    (b) => b.toString(16).padStart(2, '0')).join('');

  /** batch number -> { form, data, closed, sending } */
  const shown = new Map();
  let connected = false;
  let everConnected = false;

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
    emptyEl.hidden = !everConnected || shown.size > 0;
    document.title = n > 0 ? '(' + n + ') ask-user' : 'ask-user';
    if (!connected) {
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

  function displayLabel(label) {
    const trimmed = label.trimEnd();
    if (trimmed.endsWith(RECOMMENDED)) {
      const rest = trimmed.slice(0, -RECOMMENDED.length).trimEnd();
      if (rest.length > 0) return rest;
    }
    return label;
  }

  function buildQuestion(batchNo, index, q) {
    const node = tQuestion.content.firstElementChild.cloneNode(true);
    const chip = node.querySelector('.chip');
    if (q.header) {
      chip.textContent = q.header;
      chip.title = q.header;
      chip.hidden = false;
      // A long header is cut on screen; a tap or click shows all of it.
      chip.addEventListener('click', () => chip.classList.toggle('expanded'));
    }
    node.querySelector('.text').textContent = q.question;
    const options = node.querySelector('.options');
    const type = q.multi_select ? 'checkbox' : 'radio';
    const name = 'b' + batchNo + 'q' + index;
    q.options.forEach((opt, i) => {
      const row = tOption.content.firstElementChild.cloneNode(true);
      const input = row.querySelector('.choice');
      input.type = type;
      input.name = name;
      input.value = opt.label;
      row.querySelector('.label').textContent = displayLabel(opt.label);
      if (opt.description) {
        const desc = row.querySelector('.desc');
        desc.textContent = opt.description;
        desc.hidden = false;
      }
      if (q.recommended === i) {
        row.classList.add('recommended');
        row.querySelector('.badge').hidden = false;
        input.checked = true;
      }
      options.appendChild(row);
    });
    if (q.options.length === 0) options.hidden = true;

    const own = node.querySelector('.own-input');
    const ownLabel = node.querySelector('.own-label');
    if (q.options.length === 0) {
      ownLabel.textContent = 'Your answer';
    } else if (q.multi_select) {
      ownLabel.textContent = 'Add your own answer (optional)';
    } else {
      ownLabel.textContent = 'Or type your own answer';
    }
    if (!q.multi_select) {
      // Single-select: an own answer replaces the options, so typing clears them and
      // picking an option clears the text.
      own.addEventListener('input', () => {
        if (own.value.trim() !== '') {
          for (const c of node.querySelectorAll('.choice')) c.checked = false;
        }
      });
      for (const c of node.querySelectorAll('.choice')) {
        c.addEventListener('change', () => { if (c.checked) own.value = ''; });
      }
    }
    own.addEventListener('keydown', (e) => {
      // Enter sends (Shift+Enter for a new line), as in a chat box.
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        node.closest('form').requestSubmit();
      }
    });

    for (const c of node.querySelectorAll('.choice')) {
      c.addEventListener('keydown', (e) => {
        // Enter on an option confirms the batch (Space toggles, arrows move, as usual).
        if (e.key === 'Enter') {
          e.preventDefault();
          node.closest('form').requestSubmit();
        }
      });
    }

    const skip = node.querySelector('.skip');
    skip.addEventListener('click', () => {
      const skipped = skip.getAttribute('aria-pressed') !== 'true';
      setSkipped(node, skipped);
    });
    node.addEventListener('change', () => clearIncomplete(node));
    node.addEventListener('input', () => clearIncomplete(node));
    return node;
  }

  function setSkipped(node, skipped) {
    const skip = node.querySelector('.skip');
    skip.setAttribute('aria-pressed', skipped ? 'true' : 'false');
    skip.textContent = skipped ? 'Skipped — undo' : 'Skip this question';
    node.classList.toggle('skipped', skipped);
    for (const el of node.querySelectorAll('.choice, .own-input')) el.disabled = skipped;
    clearIncomplete(node);
  }

  function clearIncomplete(node) {
    node.classList.remove('incomplete');
    node.querySelector('.hint').hidden = true;
  }

  /** The answer items of a form, or null (with the incomplete questions marked) if a question
   * has neither a choice, nor text, nor a skip. */
  function collect(entry) {
    const items = [];
    let firstIncomplete = null;
    entry.form.querySelectorAll('.question').forEach((node, i) => {
      const q = entry.data.questions[i];
      if (node.classList.contains('skipped')) {
        items.push({ id: q.id, selected: [] });
        return;
      }
      const selected = Array.from(node.querySelectorAll('.choice:checked'), (c) => c.value);
      const custom = node.querySelector('.own-input').value.trim();
      if (selected.length === 0 && custom === '') {
        node.classList.add('incomplete');
        node.querySelector('.hint').hidden = false;
        if (!firstIncomplete) firstIncomplete = node;
        return;
      }
      const item = { id: q.id, selected: selected };
      if (custom !== '') item.custom = custom;
      items.push(item);
    });
    if (firstIncomplete) {
      const focusable = firstIncomplete.querySelector('.choice, .own-input');
      if (focusable) focusable.focus();
      return null;
    }
    return items;
  }

  function showError(entry, text) {
    const err = entry.form.querySelector('.error');
    err.textContent = text;
    err.hidden = false;
  }

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
      showError(entry, await response.text());
    } catch (e) {
      showError(entry, 'Could not reach ask-user: ' + e.message);
    } finally {
      entry.sending = false;
      for (const b of entry.form.querySelectorAll('.actions button')) b.disabled = entry.closed;
    }
    return false;
  }

  async function submit(entry) {
    if (entry.closed || entry.sending) return;
    const answers = collect(entry);
    if (!answers) return;
    if (await post(entry, 'answer', { batch: entry.data.batch, answers: answers, tab: tab })) {
      close(entry, 'answered', tab);
    }
  }

  async function dismiss(entry) {
    if (entry.closed || entry.sending) return;
    if (await post(entry, 'dismiss', { batch: entry.data.batch, tab: tab })) {
      close(entry, 'dismissed', tab);
    }
  }

  function addBatch(data) {
    if (shown.has(data.batch)) return;
    const form = tBatch.content.firstElementChild.cloneNode(true);
    form.dataset.batch = String(data.batch);
    const list = form.querySelector('.questions');
    data.questions.forEach((q, i) => list.appendChild(buildQuestion(data.batch, i, q)));
    const dismissButton = form.querySelector('.dismiss');
    dismissButton.textContent = data.questions.length > 1 ? 'Dismiss all' : 'Dismiss';
    dismissButton.title = 'Close without answering; the agent is told you did not answer';
    const entry = { form: form, data: data, closed: false, sending: false };
    form.addEventListener('submit', (e) => { e.preventDefault(); submit(entry); });
    dismissButton.addEventListener('click', () => dismiss(entry));
    form.querySelector('.hide').addEventListener('click', () => {
      shown.delete(data.batch);
      form.remove();
      refreshStatus();
    });
    shown.set(data.batch, entry);
    batchesEl.appendChild(form);
    // Take the keyboard to the first open question unless the human is busy elsewhere.
    const active = document.activeElement;
    if (!active || active === document.body) {
      const first = form.querySelector('.choice:checked, .choice, .own-input');
      if (first) first.focus({ preventScroll: true });
    }
    refreshStatus();
  }

  const CLOSED_TEXT = {
    'answered-here': 'Answer sent. The agent carries on.',
    'answered-elsewhere': 'Answered in another tab or on another device.',
    'dismissed-here': 'Dismissed. The agent is told you did not answer.',
    'dismissed-elsewhere': 'Dismissed in another tab or on another device.',
    cancelled: 'Withdrawn: the agent no longer needs this answer.',
    gone: 'No longer open.',
  };

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

  function close(entry, reason, by) {
    if (entry.closed) return;
    entry.closed = true;
    let kind = reason;
    if (reason === 'answered' || reason === 'dismissed') {
      kind = reason + (by === tab ? '-here' : '-elsewhere');
    }
    entry.form.classList.add('is-closed', kind);
    entry.form.dataset.closed = kind;
    for (const el of entry.form.querySelectorAll('input, textarea, .actions button, .skip')) {
      el.disabled = true;
    }
    entry.form.querySelector('.error').hidden = true;
    entry.form.querySelector('.closed-text').textContent = CLOSED_TEXT[kind] || CLOSED_TEXT.gone;
    entry.form.querySelector('.closed').hidden = false;
    focusNextOpen(entry.form);
    refreshStatus();
  }

  function onSnapshot(data) {
    const live = new Set(data.batches.map((b) => b.batch));
    for (const [no, entry] of shown) {
      if (!entry.closed && !live.has(no)) close(entry, 'gone', null);
    }
    data.batches.forEach(addBatch);
  }

  function onWithdrawn(data) {
    const entry = shown.get(data.batch);
    if (entry) close(entry, data.reason, data.by);
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
  refreshStatus();
}());
