// The browser scenarios of the web answerer's tests; see driver.cjs for the protocol.
// Each scenario gets the capability URL; the Rust test holds the server and asserts the
// model-facing outcome and the observations printed as RESULT.
'use strict';

const { launch, open, step, waitGo, result, assert, run } = require('./driver.cjs');
const { axe } = require('./flow.cjs');

const [scenario, url, ...extra] = process.argv.slice(2);

const batches = (page) => page.locator('form.batch');
const closedAs = (page, kind) => page.locator('form.batch[data-closed="' + kind + '"]');

async function closedText(form) {
  return (await form.locator('.closed-text').textContent()).trim();
}

/** What a card shows while its agent is not waiting (the notice, the model's text beside). */
async function callerGone(form) {
  const notice = form.locator('.caller-gone');
  return {
    noticeText: (await notice.textContent()).trim(),
    noticeRole: await notice.getAttribute('role'),
    question: await form.locator('.question .text').first().textContent(),
    modelElements: await form.locator('.questions b, .questions script, .questions img').count(),
    answerable: await form.locator('button.submit').isEnabled(),
  };
}

const scenarios = {
  // docs/contract.md §8, driven by crates/mcp/tests/suite/detached_page.rs: the
  // agent's call goes away (its client's timeout fired), the card says the agent stopped
  // waiting and the answer is kept; the human answers there anyway.
  async 'detached-answer'() {
    const { context, close } = await launch();
    const page = await open(context, url);
    step('ready');
    const form = batches(page).first();
    await form.waitFor();
    const notice = form.locator('.caller-gone');
    const hiddenWhileWaiting = await notice.isHidden();
    step('shown');
    await notice.waitFor({ state: 'visible', timeout: 120000 });
    const gone = await callerGone(form);
    step('notice');
    await form.locator('.option').nth(1).click();
    await form.locator('button.submit').click();
    await closedAs(page, 'answered-here').waitFor();
    result({
      hiddenWhileWaiting, ...gone,
      noticeHiddenAfter: await notice.isHidden(),
      closed: await closedText(form),
      cards: await batches(page).count(),
      errors: page.errors,
    });
    await close();
  },

  // The same, but the agent retries before the human answers: the notice goes away on the
  // same card (one question, not two), then the human answers the waiting agent.
  async 'detached-reattach'() {
    const { context, close } = await launch();
    const page = await open(context, url);
    step('ready');
    const form = batches(page).first();
    await form.waitFor();
    const notice = form.locator('.caller-gone');
    step('shown');
    await notice.waitFor({ state: 'visible', timeout: 120000 });
    const gone = await callerGone(form);
    step('notice');
    await notice.waitFor({ state: 'hidden', timeout: 120000 });
    const cardsAfterRetry = await batches(page).count();
    step('reattached');
    await waitGo();
    await form.locator('.option').nth(1).click();
    await form.locator('button.submit').click();
    await closedAs(page, 'answered-here').waitFor();
    result({ ...gone, cardsAfterRetry, closed: await closedText(form), errors: page.errors });
    await close();
  },

  // One single-select question answered by keyboard only.
  async single() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    const preselected = await form.locator('.choice:checked').evaluate((e) => e.value);
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.value);
    const badge = await form.locator('.option.recommended .badge').isVisible();
    const shownLabel = await form.locator('.option.recommended .label').textContent();
    const description = await form.locator('.option').nth(1).locator('.desc').textContent();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await closedAs(page, 'answered-here').waitFor();
    result({
      preselected, focused, badge, shownLabel, description,
      closed: await closedText(form),
      title: await page.title(),
      errors: page.errors,
    });
    await close();
  },

  // One single-select with 12 tall options, the 12th recommended and so preselected, far
  // below the fold: Enter right after load must not send it; it scrolls it into view first.
  async unseenRecommended() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    const inView = () => form.locator('.option').nth(11).evaluate((row) => {
      const r = row.getBoundingClientRect();
      return r.top >= 0 && r.bottom <= window.innerHeight;
    });
    const inViewAtLoad = await inView();
    const below = await form.locator('.option').nth(11).evaluate((row) =>
      Math.round(row.getBoundingClientRect().top - window.innerHeight));
    await page.keyboard.press('Enter');
    // Either the card closes (sent) or the page says what it holds back.
    await page.waitForFunction(() => {
      const f = document.querySelector('form.batch');
      return f.dataset.closed || !f.querySelector('.summary').hidden;
    });
    const closedAfterFirstEnter = (await form.getAttribute('data-closed')) || null;
    const summary = closedAfterFirstEnter ? null : (await form.locator('.summary').textContent()).trim();
    const inViewAfterFirstEnter = closedAfterFirstEnter ? null : await inView();
    const focused = await page.evaluate(() => document.activeElement && document.activeElement.value);
    if (!closedAfterFirstEnter) await page.keyboard.press('Enter');
    await closedAs(page, 'answered-here').waitFor();
    result({
      inViewAtLoad, belowTheFold: below > 1000, closedAfterFirstEnter, summary,
      inViewAfterFirstEnter, focused, errors: page.errors,
    });
    await close();
  },

  // A permission request taller than the screen: "Allow once" is enabled only once every part
  // of the request was in view; a jump to the end (a scrollbar drag) that skips the middle is
  // not enough.
  async tallRequest() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    const allow = form.locator('.option', { hasText: 'Allow once' }).locator('.choice');
    const frames = () => page.evaluate(() =>
      new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.waitForFunction(() => document.querySelector('form.batch .choice').disabled);
    const disabledAtLoad = await allow.isDisabled();
    await page.evaluate(() => document.activeElement && document.activeElement.blur());
    await page.keyboard.press('Enter');
    await page.evaluate(() =>
      window.scrollTo({ top: document.documentElement.scrollHeight, behavior: 'instant' }));
    await page.waitForFunction(() =>
      window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2);
    await frames();
    const disabledAfterEnd = await allow.isDisabled();
    const openAfterEnd = (await form.getAttribute('data-closed')) === null;
    let pages = 0;
    while (await page.evaluate(() => window.scrollY > 0)) {
      await page.keyboard.press('PageUp');
      await frames();
      pages += 1;
      assert(pages < 100, 'PageUp never reached the top');
    }
    const enabledAfterReading = await allow.isEnabled();
    await allow.check();
    await form.locator('button.submit').click();
    await closedAs(page, 'answered-here').waitFor();
    result({ disabledAtLoad, disabledAfterEnd, openAfterEnd, enabledAfterReading, errors: page.errors });
    await close();
  },

  // Multi-select with an own answer beside, a skipped question, a free-text question and a
  // single-select answered in own words; an incomplete submission is held back first.
  async multi() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    const q = (i) => form.locator('fieldset.question').nth(i);
    await form.locator('button.submit').click();
    const hintShown = await q(2).locator('.hint').isVisible();
    const incomplete = await form.evaluate((f) =>
      Array.from(f.querySelectorAll('fieldset.question'), (n) => n.classList.contains('incomplete')));
    const axeIncomplete = await axe(page);
    await q(0).locator('.option', { hasText: 'Lint' }).click();
    await q(0).locator('.own-input').fill('also fuzz');
    await q(1).locator('button.skip').click();
    const skipPressed = await q(1).locator('button.skip').getAttribute('aria-pressed');
    await q(2).locator('.own-input').fill('billing-api');
    await q(3).locator('.option', { hasText: 'Red' }).click();
    await q(3).locator('.own-input').fill('Teal');
    const radiosAfterTyping = await q(3).locator('.choice:checked').count();
    await form.locator('button.submit').click();
    await closedAs(page, 'answered-here').waitFor();
    result({ hintShown, incomplete, skipPressed, radiosAfterTyping, axe: axeIncomplete, errors: page.errors });
    await close();
  },

  // A submission the server refuses (a label that is not an option) shows why and keeps the
  // question open; a valid one afterwards goes through.
  async refused() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    await form.locator('.choice').nth(1).evaluate((input) => { input.value = 'Bogus'; });
    await form.locator('.option').nth(1).click();
    await form.locator('button.submit').click();
    const error = form.locator('.error');
    await error.waitFor();
    const errorText = await error.textContent();
    const stillOpen = (await form.getAttribute('data-closed')) === null;
    const axeRefused = await axe(page);
    await form.locator('.option').nth(0).click();
    await form.locator('button.submit').click();
    await closedAs(page, 'answered-here').waitFor();
    result({ errorText, stillOpen, errorHiddenAfter: await error.isHidden(), axe: axeRefused });
    await close();
  },

  // Two tabs submit at the same moment: one wins, the other shows the question answered
  // elsewhere; a late submission from the loser is refused.
  async twoTabs() {
    const { context, close } = await launch();
    const a = await open(context, url);
    const b = await open(context, url);
    await batches(a).first().waitFor();
    await batches(b).first().waitFor();
    await b.locator('.option').nth(1).click();
    await Promise.all([
      batches(a).first().evaluate((f) => f.requestSubmit()),
      batches(b).first().evaluate((f) => f.requestSubmit()),
    ]);
    const settled = (page) => page.locator('form.batch[data-closed]').waitFor();
    await Promise.all([settled(a), settled(b)]);
    const kinds = [
      await batches(a).first().getAttribute('data-closed'),
      await batches(b).first().getAttribute('data-closed'),
    ];
    const loser = kinds[0] === 'answered-here' ? b : a;
    const loserChecked = await batches(loser).first().locator('.choice:checked').count();
    const loserError = await batches(loser).first().locator('.error').isVisible();
    const late = await loser.evaluate(async () => {
      const batch = Number(document.querySelector('form.batch').dataset.batch);
      const r = await fetch('answer', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ batch, answers: [{ id: 'db', selected: ['SQLite'] }] }),
      });
      return { status: r.status, text: await r.text() };
    });
    result({
      kinds,
      texts: [await closedText(batches(a).first()), await closedText(batches(b).first())],
      late,
      loserChecked,
      loserError,
    });
    await close();
  },

  // Opened after two batches are pending: both shown; after one is answered, a reload shows
  // only the other.
  async late() {
    const { context, close } = await launch();
    const page = await open(context, url);
    await page.locator('form.batch >> nth=1').waitFor();
    const before = await batches(page).count();
    const titleBefore = await page.title();
    await batches(page).nth(1).locator('button.submit').click();
    await closedAs(page, 'answered-here').waitFor();
    const focusMoved = await page.evaluate(() => {
      const a = document.activeElement;
      return Boolean(a && a.closest('form.batch') === document.querySelectorAll('form.batch')[0]);
    });
    await page.reload();
    await batches(page).first().waitFor();
    const after = await batches(page).count();
    const remaining = await batches(page).first().locator('.text').textContent();
    const titleAfter = await page.title();
    await batches(page).first().locator('button.submit').click();
    await closedAs(page, 'answered-here').waitFor();
    result({ before, after, remaining, titleBefore, titleAfter, focusMoved });
    await close();
  },

  // The page shows the question, then waits for the Rust side to withdraw it (cancel, or
  // another answerer winning the race).
  async withdrawn() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    // An unsent choice: it must not look taken once the question is withdrawn.
    await form.locator('.option').nth(1).click();
    step('shown');
    await page.locator('form.batch[data-closed]').waitFor();
    result({
      kind: await form.getAttribute('data-closed'),
      closed: await closedText(form),
      inputsDisabled: await form.locator('.choice:enabled').count() === 0,
      checked: await form.locator('.choice:checked').count(),
      title: await page.title(),
    });
    await close();
  },

  // Every case of the shared text-safety corpus, each the text of one question (extra[0]: how
  // many), and the option labels of the last batch: what each shows and which way it runs.
  async corpus() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const count = Number(extra[0]);
    await page.waitForFunction((n) => document.querySelectorAll('fieldset.question').length === n, count, { timeout: 60000 });
    const seen = await page.evaluate(() => Array.from(document.querySelectorAll('fieldset.question'), (q) => {
      const long = q.querySelector('.long-text');
      const el = long && !long.hidden ? long : q.querySelector('.text');
      return {
        text: el.textContent,
        direction: getComputedStyle(el).direction,
        labels: Array.from(q.querySelectorAll('.option .label'), (l) => ({ text: l.textContent, direction: getComputedStyle(l).direction })),
      };
    }));
    assert(page.errors.length === 0, 'page errors: ' + page.errors.join('; '));
    result({ seen });
    await close();
  },

  // Bidi and control characters shown inert, every "(Recommended)"
  // badged, the header chip by keyboard, the incomplete hint tied to its question with a live
  // summary, accessible names without CSS uppercase; then, once answered and the server
  // stopped, "Done" and no reconnecting.
  async trust() {
    const { context, close } = await launch();
    const page = await open(context, url);
    let eventRequests = 0;
    page.on('request', (r) => { if (new URL(r.url()).pathname.endsWith('/events')) eventRequests += 1; });
    const form = batches(page).first();
    await form.waitFor();
    const q = (i) => form.locator('fieldset.question').nth(i);
    const shown = await page.evaluate(() => ({
      chip: document.querySelector('.chip').textContent,
      question: document.querySelector('.question .text').textContent,
      labels: Array.from(document.querySelectorAll('.question')[0].querySelectorAll('.option .label'), (e) => e.textContent),
      values: Array.from(document.querySelectorAll('.question')[0].querySelectorAll('.option .choice'), (e) => e.value),
      badges: Array.from(document.querySelectorAll('.question')[0].querySelectorAll('.option'), (e) => !e.querySelector('.badge').hidden),
      preselected: Array.from(document.querySelectorAll('.question')[0].querySelectorAll('.choice:checked'), (e) => e.value),
      description: document.querySelector('.option .desc').textContent,
    }));

    // The chip is no Tab stop of its own: the keyboard arriving on its question shows all of it.
    const chip = q(0).locator('.chip');
    const chipTabIndex = await chip.evaluate((c) => c.tabIndex);
    await page.keyboard.press('Tab');
    await page.keyboard.press('Shift+Tab');
    const chipExpanded = await chip.evaluate((c) => c.classList.contains('expanded'));
    // Accessible names as Chromium computes them (CSS uppercase would leak into them).
    const cdp = await context.newCDPSession(page);
    const { nodes } = await cdp.send('Accessibility.getFullAXTree');
    const names = nodes.filter((n) => n.name && n.name.value).map((n) => n.name.value);
    const chipName = names.includes(shown.chip);
    const badgeName = names.some((n) => n === 'Recommended');
    const noUppercase = !names.some((n) => n === shown.chip.toUpperCase() || n === 'RECOMMENDED');

    // Submit with the second question unanswered: the hint belongs to it, the summary says so.
    await form.locator('button.submit').click();
    await q(1).locator('.hint').waitFor();
    const incomplete = await q(1).evaluate((node) => ({
      invalid: node.getAttribute('aria-invalid'),
      describedBy: node.getAttribute('aria-describedby').split(' ').map((id) => document.getElementById(id).textContent).join(' '),
      firstInvalid: document.querySelectorAll('.question')[0].getAttribute('aria-invalid'),
    }));
    const summary = await form.locator('.summary').textContent();
    await q(1).locator('.own-input').fill('billing-api');
    const summaryAfter = await form.locator('.summary').isHidden();
    await form.locator('button.submit').click();
    await closedAs(page, 'answered-here').waitFor();
    step('answered');
    await page.locator('#status', { hasText: 'Done, you can close this tab.' }).waitFor();
    const requestsAtDone = eventRequests;
    // Reconnecting would retry within a second; give it three.
    await page.waitForTimeout(3000);
    result({
      shown, chipExpanded, chipTabIndex, chipName, badgeName, noUppercase, incomplete, summary, summaryAfter,
      status: await page.locator('#status').textContent(),
      reconnects: eventRequests - requestsAtDone,
      errors: page.errors,
    });
    await close();
  },

  // Hostile model text stays text: nothing is parsed as markup, nothing runs.
  async hostile() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    const observed = await page.evaluate(() => ({
      pwned: window.__pwned === undefined ? null : window.__pwned,
      images: document.images.length,
      scripts: Array.from(document.scripts, (s) => s.getAttribute('src')),
      anchors: document.querySelectorAll('a').length,
      bolds: document.querySelectorAll('b').length,
      chip: document.querySelector('.chip').textContent,
      chipTitle: document.querySelector('.chip').title,
      question: document.querySelector('.question .text').textContent,
      labels: Array.from(document.querySelectorAll('.option .label'), (e) => e.textContent),
      values: Array.from(document.querySelectorAll('.option .choice'), (e) => e.value),
      descriptions: Array.from(document.querySelectorAll('.option .desc'), (e) => e.textContent),
    }));
    await form.locator('.option').nth(0).hover();
    await form.locator('.option').nth(0).click();
    await form.locator('button.submit').click();
    await closedAs(page, 'answered-here').waitFor();
    observed.pwnedAfter = await page.evaluate(() => (window.__pwned === undefined ? null : window.__pwned));
    observed.errors = page.errors;
    result(observed);
    await close();
  },

  // The human dismisses the batch.
  async dismiss() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    const label = await form.locator('button.dismiss').textContent();
    await form.locator('button.dismiss').click();
    await closedAs(page, 'dismissed-here').waitFor();
    const closed = await closedText(form);
    await form.locator('button.hide').click();
    // The empty-page text, unless the server has ended meanwhile (the CLI stops after its
    // one ask): then the page says it is done instead.
    await page.locator('#empty:visible, #status:has-text("Done, you can close this tab.")').first().waitFor();
    const emptyShown = await page.locator('#empty').isVisible();
    result({ label, closed, cardsAfterHide: await batches(page).count(),
      empty: emptyShown ? await page.locator('#empty').textContent() : null });
    await close();
  },

  // Access control seen from the browser: no key, a wrong key, a foreign Host (DNS rebinding),
  // a cross-origin POST, an oversized body.
  async access() {
    const { context, close } = await launch();
    const u = new URL(url);
    const key = u.pathname.split('/')[1];
    const page = await context.newPage();
    const visit = async (target) => {
      const r = await page.goto(target);
      return { status: r.status(), text: (await page.textContent('body')).trim() };
    };
    const noKey = await visit(u.origin + '/');
    const wrongKey = await visit(u.origin + '/' + '0'.repeat(key.length) + '/');
    const rebind = await visit('http://rebind.test:' + u.port + '/' + key + '/');
    // A page on another origin (localhost instead of 127.0.0.1) posts a valid answer.
    const other = await open(context, 'http://localhost:' + u.port + '/' + key + '/');
    await batches(other).first().waitFor();
    const crossOrigin = await other.evaluate(async (target) => {
      const batch = Number(document.querySelector('form.batch').dataset.batch);
      try {
        await fetch(target + 'answer', {
          method: 'POST',
          headers: { 'Content-Type': 'text/plain' },
          body: JSON.stringify({ batch, answers: [{ id: 'db', selected: ['SQLite'] }] }),
        });
        return 'sent';
      } catch (e) {
        return 'refused: ' + e.name;
      }
    }, url);
    const mine = await open(context, url);
    await batches(mine).first().waitFor();
    const big = await mine.evaluate(async () => {
      const batch = Number(document.querySelector('form.batch').dataset.batch);
      const r = await fetch('answer', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ batch, answers: [{ id: 'db', custom: 'x'.repeat(8 * 1024 * 1024 + 1) }] }),
      });
      return { status: r.status, text: await r.text() };
    });
    const stillOpen = await batches(mine).first().getAttribute('data-closed');
    await batches(mine).first().locator('button.submit').click();
    await closedAs(mine, 'answered-here').waitFor();
    result({ noKey, wrongKey, rebind, crossOrigin, big, stillOpen });
    await close();
  },

  // A 360 px wide phone in dark mode, with a long unbroken header and label: nothing
  // overflows sideways, colours follow the system, and tapping works.
  async phone() {
    const { context, close } = await launch({
      viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, colorScheme: 'dark', hasTouch: true,
    });
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    const layout = await page.evaluate(() => {
      const chip = document.querySelector('.chip');
      return {
        scrollWidth: document.documentElement.scrollWidth,
        background: getComputedStyle(document.body).backgroundColor,
        chipClipped: chip.scrollWidth > chip.clientWidth,
        widest: Math.max(...Array.from(document.querySelectorAll('form.batch *'),
          (e) => e.getBoundingClientRect().right)),
      };
    });
    await form.locator('.chip').tap();
    layout.chipExpanded = await form.locator('.chip').evaluate((c) =>
      c.scrollWidth <= c.clientWidth && c.getBoundingClientRect().height > 40);
    await form.locator('.option').nth(1).tap();
    await form.locator('button.submit').tap();
    await closedAs(page, 'answered-here').waitFor();
    result(layout);
    await close();
  },

  // The same answer again (docs/contract.md §8): the card's one button sends the answer given
  // before as this card's answer; nothing is sent until it is tapped. `absent`: no offer.
  async 'send-again'() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    if (extra[0] === 'absent') {
      result({ offers: await form.locator('.send-again').count(), errors: page.errors });
      await close();
      return;
    }
    const button = form.locator('.send-again');
    const offer = (await button.textContent()).trim();
    const openBeforeTap = (await form.getAttribute('data-closed')) === null;
    await button.click();
    await closedAs(page, 'answered-here').waitFor();
    result({ offer, openBeforeTap, closed: await closedText(form), errors: page.errors });
    await close();
  },

  // Screenshots for the docs: desktop and a 360 px wide phone.
  async screenshot() {
    const [desktopPath, phonePath, darkPath] = extra;
    const shoot = async (file, options) => {
      const { context, close } = await launch(options);
      const page = await open(context, url);
      await batches(page).first().waitFor();
      await page.evaluate(() => document.activeElement && document.activeElement.blur());
      await page.screenshot({ path: file, fullPage: true });
      await close();
    };
    await shoot(desktopPath, { viewport: { width: 1000, height: 700 } });
    await shoot(phonePath, { viewport: { width: 360, height: 740 }, deviceScaleFactor: 2 });
    if (darkPath) {
      await shoot(darkPath, { viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, colorScheme: 'dark' });
    }
    result({ ok: true });
  },
};

Object.assign(scenarios, require('./flow.cjs')(url, extra));

const body = scenarios[scenario];
assert(body, 'unknown scenario ' + scenario);
run(body);
