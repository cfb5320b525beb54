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

  // Characters that could hide, reorder or fake text (bidi overrides and isolates, marks,
  // zero-width and other format characters, line/paragraph separators) and control
  // characters are shown as visible stand-ins, as the terminal does (crates/terminal's
  // sanitiser is the reference): C0 controls as Control Pictures (U+2400 + code), DEL as ␡,
  // a tab as a space, everything else as \u{hex}. Newlines are kept (`keepNewlines`) or shown
  // as ␤. The answer still carries the model's labels byte for byte; only the screen changes.
  const INERT = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\p{Cf}]/gu;
  function inert(text, keepNewlines) {
    return text.replace(INERT, (c) => {
      const code = c.codePointAt(0);
      if (c === '\n') return keepNewlines ? '\n' : '\u2424';
      if (c === '\t') return ' ';
      if (code < 0x20) return String.fromCodePoint(0x2400 + code);
      if (code === 0x7f) return '\u2421';
      return '\\u{' + code.toString(16) + '}';
    });
  }

  function isRecommended(label) {
    const trimmed = label.trimEnd();
    return trimmed.endsWith(RECOMMENDED)
      && trimmed.slice(0, -RECOMMENDED.length).trimEnd().length > 0;
  }

  function displayLabel(label) {
    if (isRecommended(label)) {
      return inert(label.trimEnd().slice(0, -RECOMMENDED.length).trimEnd(), false);
    }
    return inert(label, false);
  }

  function buildQuestion(batchNo, index, q) {
    const node = tQuestion.content.firstElementChild.cloneNode(true);
    const chip = node.querySelector('.chip');
    const idBase = 'b' + batchNo + 'q' + index;
    if (q.header) {
      const header = inert(q.header, false);
      chip.textContent = header;
      chip.title = header;
      chip.hidden = false;
      // A long header is cut on screen; a tap, a click, or Enter/Space on the focused chip
      // shows all of it.
      chip.tabIndex = 0;
      chip.setAttribute('aria-expanded', 'false');
      const toggle = () => {
        const expanded = chip.classList.toggle('expanded');
        chip.setAttribute('aria-expanded', expanded ? 'true' : 'false');
      };
      chip.addEventListener('click', toggle);
      chip.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(); }
      });
    }
    node.querySelector('.text').textContent = inert(q.question, true);
    // The hint belongs to its question: described by it, announced when it shows.
    const hint = node.querySelector('.hint');
    hint.id = idBase + '-hint';
    node.setAttribute('aria-describedby', hint.id);
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
        desc.textContent = inert(opt.description, true);
        desc.hidden = false;
      }
      // Every "(Recommended)" option wears the badge; only the first is preselected.
      if (q.recommended === i || isRecommended(opt.label)) {
        row.classList.add('recommended');
        row.querySelector('.badge').hidden = false;
      }
      if (q.recommended === i) input.checked = true;
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
    if (!node.classList.contains('incomplete')) return;
    node.classList.remove('incomplete');
    node.removeAttribute('aria-invalid');
    node.querySelector('.hint').hidden = true;
    const form = node.closest('form');
    if (form) summarise(form);
  }

  /** The form's live summary of what still needs an answer (announced by screen readers). */
  function summarise(form) {
    const summary = form.querySelector('.summary');
    const n = form.querySelectorAll('.question.incomplete').length;
    summary.textContent = n === 0 ? ''
      : (n === 1 ? '1 question needs an answer' : n + ' questions need an answer')
        + ': choose an option, type an answer, or skip it.';
    summary.hidden = n === 0;
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
        node.setAttribute('aria-invalid', 'true');
        node.querySelector('.hint').hidden = false;
        if (!firstIncomplete) firstIncomplete = node;
        return;
      }
      const item = { id: q.id, selected: selected };
      if (custom !== '') item.custom = custom;
      items.push(item);
    });
    summarise(entry.form);
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
        showError(entry, text);
      }
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
      close(entry, 'answered', tab, null, null);
    }
  }

  async function dismiss(entry) {
    if (entry.closed || entry.sending) return;
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
    const form = tBatch.content.firstElementChild.cloneNode(true);
    form.dataset.batch = String(data.batch);
    const list = form.querySelector('.questions');
    data.questions.forEach((q, i) => list.appendChild(buildQuestion(data.batch, i, q)));
    const dismissButton = form.querySelector('.dismiss');
    dismissButton.textContent = data.questions.length > 1 ? 'Dismiss all' : 'Dismiss';
    dismissButton.title = 'Close without answering; the agent is told you did not answer';
    const entry = { form: form, data: data, closed: false, sending: false, callerGone: false };
    setCallerWaiting(entry, data.caller_waiting !== false);
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
    'kept-here': 'Answer kept. The agent gets it when it asks again.',
    'answered-elsewhere': 'Answered in another tab or on another device.',
    'dismissed-here': 'Dismissed. The agent is told you did not answer.',
    'dismissed-elsewhere': 'Dismissed in another tab or on another device.',
    'timed-out': 'Withdrawn: the agent stopped waiting for an answer.',
    cancelled: 'Withdrawn: the agent no longer needs this answer.',
    gone: 'No longer open.',
  };

  /** What a closed card says. `where` names the answerer that won (ours, e.g. "the
   * terminal"), `text` is the server's reason for a refused submission. */
  function closedText(kind, where, text) {
    if (kind === 'answered-other') {
      return where ? 'Not taken here: answered in ' + where + '.' : 'Not taken here: answered elsewhere.';
    }
    if (kind === 'dismissed-other') {
      return where ? 'Dismissed in ' + where + '.' : 'Dismissed elsewhere.';
    }
    if (kind === 'not-taken' && text) {
      return 'N' + text.slice(1) + '.';
    }
    return CLOSED_TEXT[kind] || CLOSED_TEXT.gone;
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

  const KIND = {
    answered_elsewhere: 'answered-other',
    dismissed_elsewhere: 'dismissed-other',
    timed_out: 'timed-out',
  };

  function close(entry, reason, by, where, text) {
    if (entry.closed) return;
    entry.closed = true;
    let kind = KIND[reason] || reason;
    if (reason === 'answered' || reason === 'dismissed') {
      kind = reason + (by === tab ? '-here' : '-elsewhere');
    }
    entry.form.classList.add('is-closed', kind);
    entry.form.dataset.closed = kind;
    const form = entry.form;
    for (const el of form.querySelectorAll('input, textarea, .actions button, .skip')) {
      el.disabled = true;
    }
    if (kind !== 'answered-here' && kind !== 'dismissed-here') {
      // Nothing of this tab was sent: clear its choices so none looks taken.
      for (const c of form.querySelectorAll('.choice')) c.checked = false;
      for (const t of form.querySelectorAll('.own-input')) t.value = '';
    }
    form.querySelector('.error').hidden = true;
    for (const q of form.querySelectorAll('.question.incomplete')) {
      q.classList.remove('incomplete');
      q.removeAttribute('aria-invalid');
      q.querySelector('.hint').hidden = true;
    }
    summarise(form);
    const gone = form.querySelector('.caller-gone');
    gone.hidden = true;
    form.classList.remove('caller-gone-shown');
    // Sent while the agent was not waiting: kept for its retry, not read yet.
    const said = kind === 'answered-here' && entry.callerGone ? 'kept-here' : kind;
    form.querySelector('.closed-text').textContent = closedText(said, where, text);
    form.querySelector('.closed').hidden = false;
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
      if (!entry.closed) close(entry, 'cancelled', null, null, null);
    }
    emptyEl.hidden = true;
    refreshStatus();
  });
  // For the page's tests: the sanitiser, checked in Chromium against the terminal's rule.
  window.askUserInert = inert;
  refreshStatus();
}());
