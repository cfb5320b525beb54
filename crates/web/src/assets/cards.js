// The question card shared by ask-user's local page (app.js) and the hub's inbox (inbox.js):
// building a card from the `t-batch`/`t-question`/`t-option` templates (cards.html), the
// keys and rules of answering, collecting the answers, and the closed state. One card
// implementation, so a fix reaches both pages (docs/contract.md §9 "the same card UI").
// Model text (questions, headers, labels, descriptions) is untrusted: it is only ever put on the
// page with textContent, as a property value, or as an attribute set through a property; never
// as HTML.
//
// Nothing is sent that the screen did not show (docs/contract.md §6): Enter on a question moves
// to the next one and only Enter on the last one submits; Submit holds a batch back while one
// of its questions was never on screen, or while a preselected (recommended) option counts as
// chosen without ever having been on screen, or while part of a question's text was never in
// view (it scrolls there instead); the options of a question whose text is taller than the
// screen (a long permission request) are enabled only once all of it was in view; a batch of
// several questions shows, beside Submit, exactly what will be sent.
'use strict';

(function () {
  const RECOMMENDED = '(Recommended)';
  const tBatch = document.getElementById('t-batch');
  const tQuestion = document.getElementById('t-question');
  const tOption = document.getElementById('t-option');

  // Model text is shown only in the form the server prepared by the one text-safety rule of
  // every surface (`shown` beside each question: ask_user_core::text, docs/contract.md §6 "Text
  // safety"): this script applies no rule of its own, and puts that text on the page with
  // textContent. Every text block lays itself out by its own first strong character
  // (dir="auto" in cards.html), so right-to-left questions read right to left.

  /** The human's own typed text on one line (their text, not the model's). */
  function oneLine(text) {
    return text.replace(/\r?\n/g, '\u2424');
  }

  function isRecommended(label) {
    const trimmed = label.trimEnd();
    return trimmed.endsWith(RECOMMENDED)
      && trimmed.slice(0, -RECOMMENDED.length).trimEnd().length > 0;
  }


  // Whether the human last used the keyboard (not a pointer): a header chip expands when the
  // keyboard reaches its question.
  let keyboardUsed = false;
  document.addEventListener('keydown', () => { keyboardUsed = true; }, true);
  document.addEventListener('pointerdown', () => { keyboardUsed = false; }, true);

  /** A question longer than this (or of several lines) is body text, not a bold heading. */
  const LONG_QUESTION = 160;

  /** A short name for question `q` (its header, else the first line of its text, cut), for the
   * legend, the review beside Submit, the closed card and the hub's history: a name, so the
   * text's line breaks are not shown there as ␤ (the card shows the whole text). */
  function shortName(q) {
    const shown = q.shown || q;
    const source = shown.header || shown.question || q.id || '';
    const first = source.split('\n').find((l) => l.trim() !== '') || source;
    const line = first.replace(/\s+/g, ' ').trim();
    return line.length > 60 ? line.slice(0, 59).trimEnd() + '…' : line;
  }

  function questionsOf(node) {
    return Array.from(node.closest('form').querySelectorAll('.question'));
  }

  /** Moves the keyboard to question `node`: its chosen option, else its first, else its text. */
  function focusQuestion(node) {
    const target = node.querySelector('.choice:checked:enabled, .choice:enabled, .own-input:enabled')
      || node.querySelector('.skip');
    if (target) target.focus({ preventScroll: true });
    node.scrollIntoView({ block: 'nearest' });
    markSeen(node);
  }

  /** Enter on a question: the next question, or (on the last) submit the batch. */
  function advance(node) {
    const all = questionsOf(node);
    const next = all[all.indexOf(node) + 1];
    if (next) focusQuestion(next);
    else node.closest('form').requestSubmit();
  }

  function buildQuestion(batchNo, index, q, count) {
    const node = tQuestion.content.firstElementChild.cloneNode(true);
    const chip = node.querySelector('.chip');
    const idBase = 'b' + batchNo + 'q' + index;
    node.dataset.index = String(index);
    if (count > 1) {
      const progress = node.querySelector('.progress');
      progress.textContent = (index + 1) + ' of ' + count;
      progress.hidden = false;
    }
    const shown = q.shown;
    if (shown.header) {
      const header = shown.header;
      chip.textContent = header;
      chip.title = header;
      chip.hidden = false;
      // A long header is cut on screen; a tap or a click shows all of it, and so does the
      // keyboard arriving on its question (no Tab stop of its own).
      chip.addEventListener('click', () => chip.classList.toggle('expanded'));
      node.addEventListener('focusin', () => { if (keyboardUsed) chip.classList.add('expanded'); });
    }
    const text = shown.question;
    const textEl = node.querySelector('.text');
    if (text.length > LONG_QUESTION || text.includes('\n')) {
      // A long question reads as body text below a short legend.
      textEl.remove();
      const body = node.querySelector('.long-text');
      body.textContent = text;
      body.id = idBase + '-text';
      body.hidden = false;
      node.querySelector('.legend-short').textContent = shortName({ question: text });
      node.querySelector('.legend-short').hidden = false;
    } else {
      textEl.textContent = text;
    }
    // The hint belongs to its question: described by it, announced when it shows.
    const hint = node.querySelector('.hint');
    hint.id = idBase + '-hint';
    const longId = node.querySelector('.long-text').id;
    node.setAttribute('aria-describedby', longId ? longId + ' ' + hint.id : hint.id);
    const options = node.querySelector('.options');
    const type = q.multi_select ? 'checkbox' : 'radio';
    const name = 'b' + batchNo + 'q' + index;
    q.options.forEach((opt, i) => {
      const row = tOption.content.firstElementChild.cloneNode(true);
      const input = row.querySelector('.choice');
      input.type = type;
      input.name = name;
      input.value = opt.label;
      const shownOpt = shown.options[i];
      input.dataset.shown = shownOpt.label;
      row.querySelector('.label').textContent = shownOpt.label;
      if (shownOpt.description) {
        const desc = row.querySelector('.desc');
        desc.textContent = shownOpt.description;
        desc.hidden = false;
      }
      // Every "(Recommended)" option wears the badge; only the first is preselected.
      if (q.recommended === i || isRecommended(opt.label)) {
        row.classList.add('recommended');
        row.querySelector('.badge').hidden = false;
      }
      if (q.recommended === i) {
        input.checked = true;
        input.defaultChecked = true;
        // Chosen by the page, not the human: it counts only once it was on screen.
        row.dataset.preset = 'true';
        if (choiceObserver) choiceObserver.observe(row);
      }
      // A choice the human makes (a click, a key) was in front of them.
      input.addEventListener('change', () => markChoiceSeen(row));
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
      // Enter goes on (Shift+Enter for a new line), as in a chat box.
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        advance(node);
      }
    });
    for (const c of node.querySelectorAll('.choice')) {
      c.addEventListener('keydown', (e) => {
        // Enter on an option confirms this question (Space toggles, arrows move, as usual).
        if (e.key === 'Enter') {
          e.preventDefault();
          advance(node);
        }
      });
    }
    node.addEventListener('keydown', (e) => {
      // Esc skips this question and goes on; it never sends the batch by itself.
      if (e.key !== 'Escape' || e.isComposing || node.closest('form.is-closed')) return;
      e.preventDefault();
      setSkipped(node, true);
      const all = questionsOf(node);
      const next = all[all.indexOf(node) + 1];
      if (next) focusQuestion(next);
      else node.closest('form').querySelector('.submit').focus();
    });
    node.addEventListener('focusin', () => markSeen(node));

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
    if (!skipped && node.dataset.held === 'true') {
      for (const el of node.querySelectorAll('.choice')) el.disabled = true;
    }
    clearIncomplete(node);
    const form = node.closest('form');
    if (form) review(form);
  }

  // Which questions were on screen: a question counts as seen once half of it (or half the
  // screen's height of it) was visible, or the keyboard was in it.
  const seenObserver = typeof IntersectionObserver === 'function'
    ? new IntersectionObserver((entries) => {
      for (const e of entries) {
        const tall = e.rootBounds && e.intersectionRect.height >= e.rootBounds.height * 0.5;
        if (e.isIntersecting && (e.intersectionRatio >= 0.5 || tall)) markSeen(e.target);
        if (e.isIntersecting) readText(e.target);
      }
    }, { threshold: [0, 0.25, 0.5, 0.75, 1] })
    : null;

  // Which parts of each question's text were in view, as fractions of its height: a question is
  // read once all of it was. A text taller than the screen keeps the question's options (and
  // the hub's one-tap Send) disabled until then; Submit checks every question (readText).
  function textOf(node) {
    const long = node.querySelector('.long-text');
    return long && !long.hidden ? long : node.querySelector('.text');
  }

  /** How much of `node`'s text, from its top, was in view without a gap (a fraction). */
  function readUpTo(node) {
    let covered = 0;
    for (const [a, b] of node.askUserRead || []) if (a <= covered + 0.002) covered = Math.max(covered, b);
    return covered;
  }

  /** Records what of `node`'s text is in view now; true once all of it was. */
  function readText(node) {
    if (node.dataset.read === 'true') return true;
    const el = textOf(node);
    if (!el) return true;
    const r = el.getBoundingClientRect();
    if (r.height <= 0) return false;
    const h = window.innerHeight || document.documentElement.clientHeight;
    const from = Math.max(0, -r.top) / r.height;
    const to = Math.min(r.height, h - r.top) / r.height;
    const spans = node.askUserRead || (node.askUserRead = []);
    if (to > from) spans.push([from, to]);
    spans.sort((a, b) => a[0] - b[0]);
    node.askUserTall = r.height > h;
    if (readUpTo(node) >= 0.998) {
      node.dataset.read = 'true';
      delete node.askUserRead;
    }
    holdChoices(node);
    return node.dataset.read === 'true';
  }

  /** Disables the options (and the hub's one-tap Send) of a question whose text, taller than
   * the screen, was not all in view yet; enables them once it was. */
  function holdChoices(node) {
    const hold = node.askUserTall === true && node.dataset.read !== 'true';
    if (hold === (node.dataset.held === 'true')) return;
    if (hold) node.dataset.held = 'true'; else delete node.dataset.held;
    const skipped = node.classList.contains('skipped');
    for (const el of node.querySelectorAll('.choice')) el.disabled = hold || skipped;
    for (const el of node.querySelectorAll('.quick')) el.disabled = hold;
  }

  let readPending = false;
  function readAll() {
    readPending = false;
    for (const node of document.querySelectorAll('form.batch:not(.is-closed) .question')) {
      if (node.dataset.read !== 'true') readText(node);
    }
  }
  function scheduleRead() {
    if (readPending) return;
    readPending = true;
    requestAnimationFrame(readAll);
  }
  document.addEventListener('scroll', scheduleRead, { capture: true, passive: true });
  window.addEventListener('resize', scheduleRead, { passive: true });

  // Which preselected options were on screen: the same rule, per option row.
  const choiceObserver = typeof IntersectionObserver === 'function'
    ? new IntersectionObserver((entries) => {
      for (const e of entries) {
        const tall = e.rootBounds && e.intersectionRect.height >= e.rootBounds.height * 0.5;
        if (e.isIntersecting && (e.intersectionRatio >= 0.5 || tall)) markChoiceSeen(e.target);
      }
    }, { threshold: [0, 0.25, 0.5, 0.75, 1] })
    : null;

  function markChoiceSeen(row) {
    if (row.dataset.preset !== 'true') return;
    delete row.dataset.preset;
    if (choiceObserver) choiceObserver.unobserve(row);
  }

  /** The first chosen option of `node` that the human never had on screen (a preselected
   * option that was never in view), or null. */
  function unseenChoice(node) {
    for (const c of node.querySelectorAll('.choice:checked')) {
      const row = c.closest('.option');
      if (row.dataset.preset === 'true' && onScreen(row)) markChoiceSeen(row);
      if (row.dataset.preset === 'true') return row;
    }
    return null;
  }

  function markSeen(node) {
    if (node.dataset.seen === 'true') return;
    node.dataset.seen = 'true';
    // Still watched while its text is not all read (each crossing reads what is in view).
    if (seenObserver && node.dataset.read === 'true') seenObserver.unobserve(node);
  }

  /** Whether `node` is on screen now (the observer's rule, checked at once). */
  function onScreen(node) {
    const r = node.getBoundingClientRect();
    const h = window.innerHeight || document.documentElement.clientHeight;
    const visible = Math.min(r.bottom, h) - Math.max(r.top, 0);
    return visible > 0 && (visible >= r.height * 0.5 || visible >= h * 0.5);
  }

  function clearIncomplete(node) {
    const form = node.closest('form');
    if (form) review(form);
    if (!node.classList.contains('incomplete')) return;
    node.classList.remove('incomplete');
    node.removeAttribute('aria-invalid');
    node.querySelector('.hint').hidden = true;
    if (form) summarise(form);
  }

  /** The form's live summary of what still needs an answer or a look (announced by screen
   * readers). */
  function summarise(form) {
    const summary = form.querySelector('.summary');
    const n = form.querySelectorAll('.question.incomplete').length;
    const unseen = Array.from(form.querySelectorAll('.question'))
      .filter((q) => summary.dataset.unseen && q.dataset.seen !== 'true');
    const unread = Array.from(form.querySelectorAll('.question'))
      .filter((q) => summary.dataset.unseen && !q.classList.contains('skipped')
        && q.dataset.read !== 'true');
    const unseenChoices = Array.from(form.querySelectorAll('.question'))
      .filter((q) => summary.dataset.unseen && !q.classList.contains('skipped')
        && q.querySelector('.option[data-preset="true"] .choice:checked'));
    let text = '';
    if (n > 0) {
      text = (n === 1 ? '1 question needs an answer' : n + ' questions need an answer')
        + ': choose an option, type an answer, or skip it.';
    } else if (unseen.length > 0) {
      const which = unseen.map((q) => Number(q.dataset.index) + 1).join(', ');
      text = 'Not sent yet: check question ' + which + ' (scrolled into view), then Submit again.';
    } else if (unread.length > 0) {
      const which = unread.map((q) => Number(q.dataset.index) + 1).join(', ');
      text = 'Not sent yet: read all of question ' + which
        + ' (scrolled to the part not yet shown), then Submit again.';
    } else if (unseenChoices.length > 0) {
      const which = unseenChoices.map((q) => Number(q.dataset.index) + 1).join(', ');
      text = 'Not sent yet: check your choice in question ' + which
        + ' (scrolled into view), then Submit again.';
    } else {
      delete summary.dataset.unseen;
    }
    summary.textContent = text;
    summary.hidden = text === '';
  }

  /** What each question of `form` would send now: [{ name, text, state }], `state` one of
   * `answer`, `skipped`, `missing`. */
  function pending(form, data) {
    return Array.from(form.querySelectorAll('.question'), (node, i) => {
      const q = data.questions[i];
      const name = shortName(q);
      if (node.classList.contains('skipped')) return { name, text: 'skipped', state: 'skipped' };
      const parts = Array.from(node.querySelectorAll('.choice:checked'),
        (c) => c.dataset.shown);
      const custom = node.querySelector('.own-input').value.trim();
      if (custom !== '') parts.push('“' + oneLine(custom) + '”');
      if (parts.length === 0) return { name, text: 'not answered yet', state: 'missing' };
      return { name, text: parts.join(', '), state: 'answer' };
    });
  }

  function fillList(list, rows) {
    list.replaceChildren(...rows.map((r) => {
      const li = document.createElement('li');
      li.className = r.state;
      const name = document.createElement('span');
      name.className = 'r-name';
      name.textContent = r.name + ': ';
      const text = document.createElement('span');
      text.className = 'r-text';
      text.dir = 'auto';
      text.textContent = r.text;
      li.append(name, text);
      return li;
    }));
  }

  /** Keeps the "will send" list beside Submit true (batches of several questions). */
  function review(form) {
    const box = form.querySelector('.review');
    if (!box || !form.askUserData || form.classList.contains('is-closed')) return;
    if (form.askUserData.questions.length < 2) return;
    fillList(box.querySelector('ol'), pending(form, form.askUserData));
    box.hidden = false;
  }

  /** The answer items of a form, or null: with the incomplete questions marked when a
   * question has neither a choice, nor text, nor a skip; or with the first question that was
   * never on screen scrolled into view. */
  function collect(entry) {
    const items = [];
    let firstIncomplete = null;
    const nodes = Array.from(entry.form.querySelectorAll('.question'));
    nodes.forEach((node, i) => {
      const q = entry.data.questions[i];
      if (node.dataset.seen !== 'true' && onScreen(node)) markSeen(node);
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
    const unseen = nodes.find((n) => n.dataset.seen !== 'true');
    if (!firstIncomplete && unseen) {
      entry.form.querySelector('.summary').dataset.unseen = 'true';
      summarise(entry.form);
      focusQuestion(unseen);
      unseen.scrollIntoView({ block: 'center' });
      return null;
    }
    // A question is answered only once all of its text was in view: Enter or Submit before
    // that scrolls to the first part not yet shown.
    const unread = firstIncomplete || unseen ? null
      : nodes.find((n) => !n.classList.contains('skipped') && !readText(n));
    if (unread) {
      entry.form.querySelector('.summary').dataset.unseen = 'true';
      summarise(entry.form);
      const r = textOf(unread).getBoundingClientRect();
      const h = window.innerHeight || document.documentElement.clientHeight;
      window.scrollBy(0, r.top + readUpTo(unread) * r.height - h * 0.1);
      return null;
    }
    // A preselected option counts as chosen only once it was on screen: Enter or Submit with
    // one never in view scrolls to it (and focuses it) instead of sending it.
    const choiceRow = firstIncomplete ? null
      : nodes.filter((n) => !n.classList.contains('skipped')).map(unseenChoice).find((r) => r);
    if (choiceRow) {
      entry.form.querySelector('.summary').dataset.unseen = 'true';
      summarise(entry.form);
      choiceRow.querySelector('.choice').focus({ preventScroll: true });
      choiceRow.scrollIntoView({ block: 'center' });
      return null;
    }
    summarise(entry.form);
    if (firstIncomplete) {
      focusQuestion(firstIncomplete);
      return null;
    }
    return items;
  }

  function showError(entry, text) {
    const err = entry.form.querySelector('.error');
    err.textContent = text;
    err.hidden = false;
  }

  /** Whether the human has started on `form`: typed text, a choice other than the preset, or
   * a skip. */
  function inProgress(form) {
    for (const t of form.querySelectorAll('.own-input')) if (t.value.trim() !== '') return true;
    for (const c of form.querySelectorAll('.choice')) if (c.checked !== c.defaultChecked) return true;
    return form.querySelector('.question.skipped') !== null;
  }

  /** Dismiss pressed: true when it should go through now. With answers or text in progress
   * the first press only asks once more (the button says so); the next press confirms. */
  function confirmDismiss(form) {
    const button = form.querySelector('.dismiss');
    if (button.dataset.armed === 'true' || !inProgress(form)) return true;
    button.dataset.armed = 'true';
    button.dataset.label = button.textContent;
    button.textContent = 'Discard your answers? Press again';
    const notice = form.querySelector('.summary');
    notice.textContent = 'You have started answering: press Dismiss again to discard it, or carry on.';
    notice.hidden = false;
    const disarm = (e) => {
      if (e && e.target === button) return;
      button.dataset.armed = 'false';
      button.textContent = button.dataset.label;
      summarise(form);
      form.removeEventListener('input', disarm);
      form.removeEventListener('change', disarm);
    };
    form.addEventListener('input', disarm);
    form.addEventListener('change', disarm);
    return false;
  }

  /** A new card (the `t-batch` form) for `data` ({ batch, questions }); its buttons are not
   * wired: the page decides where answers go. */
  function buildCard(data) {
    const form = tBatch.content.firstElementChild.cloneNode(true);
    form.dataset.batch = String(data.batch);
    form.askUserData = data;
    const list = form.querySelector('.questions');
    const count = data.questions.length;
    data.questions.forEach((q, i) => list.appendChild(buildQuestion(data.batch, i, q, count)));
    const dismissButton = form.querySelector('.dismiss');
    dismissButton.textContent = count > 1 ? 'Dismiss all' : 'Dismiss';
    dismissButton.title = 'Close without answering; the agent is told you did not answer';
    if (count > 1) form.querySelector('.submit').textContent = 'Submit ' + count + ' answers';
    for (const q of list.querySelectorAll('.question')) {
      if (seenObserver) seenObserver.observe(q); else markSeen(q);
    }
    review(form);
    return form;
  }

  // What a closed card says, one distinct wording and icon per way of closing.
  const CLOSED = {
    'answered-here': ['✔', 'Answer sent. The agent carries on.'],
    'kept-here': ['✔', 'Answer kept. The agent gets it when it asks again.'],
    'answered-elsewhere': ['↗', 'Answered in another tab or on another device.'],
    'answered-other': ['↗', 'Not taken here: answered elsewhere.'],
    'dismissed-here': ['✕', 'Dismissed. The agent is told you did not answer.'],
    'dismissed-elsewhere': ['✕', 'Dismissed in another tab or on another device.'],
    'dismissed-other': ['✕', 'Dismissed elsewhere.'],
    'timed-out': ['◷', 'Timed out: the agent’s time limit ran out. Nothing was sent.'],
    cancelled: ['⊘', 'Withdrawn by the agent: it no longer needs this answer. Nothing was sent.'],
    stopped: ['■', 'ask-user stopped before an answer was sent. Nothing was sent.'],
    'not-taken': ['⚠', 'Not taken.'],
    gone: ['·', 'Closed elsewhere. Nothing was sent from here.'],
  };

  /** What a closed card says. `where` names the answerer that won (ours, e.g. "the
   * terminal"), `text` is the server's reason for a refused submission. */
  function closedText(kind, where, text) {
    if (kind === 'answered-other' && where) return 'Not taken here: answered in ' + where + '.';
    if (kind === 'dismissed-other' && where) return 'Dismissed in ' + where + '.';
    if (kind === 'not-taken' && text) return 'N' + text.slice(1) + '.';
    return (CLOSED[kind] || CLOSED.gone)[1];
  }

  const KIND = {
    answered_elsewhere: 'answered-other',
    dismissed_elsewhere: 'dismissed-other',
    timed_out: 'timed-out',
  };

  /** Shows `form` closed as `kind` (see CLOSED and closedText). An answer sent from here is
   * listed as sent; text typed here that was not sent stays visible and copyable. */
  function closeCard(form, kind, where, text) {
    const sentHere = kind === 'answered-here' || kind === 'kept-here';
    const sent = form.askUserData ? pending(form, form.askUserData) : [];
    form.classList.add('is-closed', kind);
    form.dataset.closed = kind;
    for (const el of form.querySelectorAll('input, .actions button, .skip')) el.disabled = true;
    let kept = 0;
    for (const t of form.querySelectorAll('.own-input')) {
      // Read-only, not disabled: the text can still be selected and copied.
      t.disabled = false;
      t.readOnly = true;
      const has = t.value.trim() !== '';
      t.closest('.own').classList.toggle('has-text', has);
      if (has && !sentHere) kept += 1;
    }
    if (!sentHere) {
      // Nothing of this tab was sent: clear its choices so none looks taken.
      for (const c of form.querySelectorAll('.choice')) c.checked = false;
    }
    form.querySelector('.error').hidden = true;
    for (const q of form.querySelectorAll('.question.incomplete')) {
      q.classList.remove('incomplete');
      q.removeAttribute('aria-invalid');
      q.querySelector('.hint').hidden = true;
    }
    delete form.querySelector('.summary').dataset.unseen;
    summarise(form);
    form.querySelector('.review').hidden = true;
    const gone = form.querySelector('.caller-gone');
    if (gone) gone.hidden = true;
    form.querySelector('.closed-icon').textContent = (CLOSED[kind] || CLOSED.gone)[0];
    form.querySelector('.closed-text').textContent = closedText(kind, where, text);
    const sentList = form.querySelector('.sent');
    if (sentHere && sent.length > 0) {
      fillList(sentList.querySelector('ol'), sent);
      sentList.hidden = false;
    } else {
      sentList.hidden = true;
    }
    const keptNote = form.querySelector('.kept');
    keptNote.hidden = kept === 0;
    form.querySelector('.closed').hidden = false;
  }

  /** Replaces what a closed card says (the page knows more than the card, e.g. an answer
   * kept for a caller that stopped waiting). */
  function setClosedText(form, kind) {
    form.querySelector('.closed-icon').textContent = (CLOSED[kind] || CLOSED.gone)[0];
    form.querySelector('.closed-text').textContent = closedText(kind);
  }

  /** The same question answered before (the card's `previous`, docs/contract.md §8 "The same
   * answer again"): one button before the card's actions, "Send the same answer again (given
   * 10:42: Yes)", the earlier answer whole in its text. A click calls `send(answers, sent)`:
   * the page posts `answers` as this card's answer, like any other — the human's own act,
   * never done for them; `sent` names what was sent, one line per question. Returns the
   * button, or null when `previous` offers nothing. */
  function addSendAgain(form, questions, previous, send) {
    if (!previous || !previous.answers || !Array.isArray(previous.answers.answers)
        || !previous.shown || !Array.isArray(previous.shown.answers)
        || previous.shown.answers.length === 0) return null;
    const named = previous.shown.answers.map((a) => {
      const q = questions.find((x) => x.id === a.id);
      const parts = (Array.isArray(a.selected) ? a.selected : []).map(String);
      if (typeof a.custom === 'string') parts.push('“' + a.custom + '”');
      return { name: q ? shortName(q) : '?', said: parts.length ? parts.join(', ') : 'skipped' };
    });
    const what = named.map((n) => (questions.length === 1 ? n.said : n.name + ': ' + n.said)).join('; ');
    const given = new Date(previous.closed_at);
    let at = given.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    if (given.toDateString() !== new Date().toDateString()) at = given.toLocaleDateString() + ' ' + at;
    const p = document.createElement('p');
    p.className = 'again';
    const b = document.createElement('button');
    b.type = 'button';
    b.className = 'send-again';
    b.dir = 'auto';
    b.textContent = 'Send the same answer again (given ' + at + ': ' + what + ')';
    p.append(b);
    form.querySelector('.actions').before(p);
    b.addEventListener('click', () => send(previous.answers.answers, named.map((n) => n.name + ': ' + n.said)));
    return b;
  }

  window.askUserCards = {
    shortName: shortName,
    addSendAgain: addSendAgain,
    buildCard: buildCard,
    collect: collect,
    showError: showError,
    confirmDismiss: confirmDismiss,
    closeCard: closeCard,
    setClosedText: setClosedText,
    closedText: closedText,
    KIND: KIND,
  };
}());
