// The question card shared by ask-user's local page (app.js) and the hub's inbox (inbox.js):
// building a card from the `t-batch`/`t-question`/`t-option` templates (cards.html), the
// keys and rules of answering, collecting the answers, and the closed state. One card
// implementation, so a fix reaches both pages (docs/contract.md §9 "the same card UI").
// Model text (questions, headers, labels, descriptions) is untrusted: it is only ever put on the
// page with textContent, as a property value, or as an attribute set through a property; never
// as HTML.
'use strict';

(function () {
  const RECOMMENDED = '(Recommended)';
  const tBatch = document.getElementById('t-batch');
  const tQuestion = document.getElementById('t-question');
  const tOption = document.getElementById('t-option');

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

  /** A new card (the `t-batch` form) for `data` ({ batch, questions }); its buttons are not
   * wired: the page decides where answers go. */
  function buildCard(data) {
    const form = tBatch.content.firstElementChild.cloneNode(true);
    form.dataset.batch = String(data.batch);
    const list = form.querySelector('.questions');
    data.questions.forEach((q, i) => list.appendChild(buildQuestion(data.batch, i, q)));
    const dismissButton = form.querySelector('.dismiss');
    dismissButton.textContent = data.questions.length > 1 ? 'Dismiss all' : 'Dismiss';
    dismissButton.title = 'Close without answering; the agent is told you did not answer';
    return form;
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

  const KIND = {
    answered_elsewhere: 'answered-other',
    dismissed_elsewhere: 'dismissed-other',
    timed_out: 'timed-out',
  };

  /** Shows `form` closed as `kind` (see CLOSED_TEXT and closedText). */
  function closeCard(form, kind, where, text) {
    form.classList.add('is-closed', kind);
    form.dataset.closed = kind;
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
    if (gone) gone.hidden = true;
    form.querySelector('.closed-text').textContent = closedText(kind, where, text);
    form.querySelector('.closed').hidden = false;
  }

  window.askUserCards = {
    inert: inert,
    buildCard: buildCard,
    collect: collect,
    showError: showError,
    closeCard: closeCard,
    closedText: closedText,
    KIND: KIND,
  };
}());
