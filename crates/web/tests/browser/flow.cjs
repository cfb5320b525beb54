// Browser scenarios for "nothing is sent that the screen does not show" and the closed
// states (docs/contract.md §6): keys counted, the review beside Submit, a question never on
// screen held back, Dismiss asking once more, typed text kept when a question closes, and
// axe-core over every state. Merged into scenarios.cjs; same protocol (driver.cjs).
'use strict';

const fs = require('fs');
const { launch, open, step, result } = require('./driver.cjs');

const batches = (page) => page.locator('form.batch');
const closedAs = (page, kind) => page.locator('form.batch[data-closed="' + kind + '"]');

/** axe-core (npm, pinned in tools/node) over the page as it is now: the serious and critical
 * violations, as `rule: target…`. Evaluated through the DevTools protocol, so the page's CSP
 * (no inline script) stays as it is. */
async function axe(page) {
  if (!page.axeLoaded) {
    await page.evaluate(fs.readFileSync(process.env.AXE_CORE, 'utf8'));
    page.axeLoaded = true;
  }
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return found.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => v.id + ': ' + v.nodes.join(', '));
}

/** The questions' positions of the focused element (-1: not in a question). */
function focusedQuestion(page) {
  return page.evaluate(() => {
    const a = document.activeElement;
    const q = a && a.closest('.question');
    return q ? Number(q.dataset.index) : -1;
  });
}

function listTexts(form, selector) {
  return form.locator(selector + ' li').allTextContents();
}

const scenarios = (url, extra) => ({
  // A three-question batch answered by keyboard only: Enter confirms each question and moves
  // to the next; only the Enter on the last one sends. Counts the keys.
  async keys() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    const axeOpen = await axe(page);
    // What a screen reader is told: role and name of every control and group, from
    // Chromium's accessibility tree.
    const cdp = await context.newCDPSession(page);
    const { nodes } = await cdp.send('Accessibility.getFullAXTree');
    const ROLES = new Set(['group', 'radio', 'checkbox', 'textbox', 'button', 'status', 'list']);
    const names = nodes.filter((n) => !n.ignored && n.role && ROLES.has(n.role.value))
      .map((n) => n.role.value + ': ' + ((n.name && n.name.value) || ''));
    let keys = 0;
    const press = async (k) => { keys += 1; await page.keyboard.press(k); };
    const focus = [await focusedQuestion(page)];
    await press('Enter');
    const openAfterFirst = (await form.getAttribute('data-closed')) === null;
    focus.push(await focusedQuestion(page));
    await press('Enter');
    focus.push(await focusedQuestion(page));
    const review = await listTexts(form, '.review');
    const submitLabel = (await form.locator('button.submit').textContent()).trim();
    const progress = await form.locator('.progress').allTextContents();
    await press('Enter');
    await closedAs(page, 'answered-here').waitFor();
    result({
      keys, openAfterFirst, focus, review, submitLabel, progress, names,
      sent: await listTexts(form, '.sent'),
      axe: { open: axeOpen, answered: await axe(page) },
      errors: page.errors,
    });
    await close();
  },

  // A phone, a batch whose last question is far below: Submit pressed from the top (a
  // keyboard's Enter on the button) sends nothing, scrolls to that question and says so; once
  // it was on screen, Enter there sends.
  async unseen() {
    const { context, close } = await launch({ viewport: { width: 360, height: 640 }, hasTouch: true });
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    const seenBefore = await form.locator('.question').nth(2).getAttribute('data-seen');
    await form.locator('button.submit').evaluate((b) => { window.scrollTo(0, 0); b.focus({ preventScroll: true }); });
    await page.keyboard.press('Enter');
    await form.locator('.summary:not([hidden])').waitFor();
    const summary = await form.locator('.summary').textContent();
    const stillOpen = (await form.getAttribute('data-closed')) === null;
    const focus = await focusedQuestion(page);
    const lastVisible = await form.locator('.question').nth(1).evaluate((n) => {
      const r = n.getBoundingClientRect();
      return r.top < window.innerHeight && r.bottom > 0;
    });
    const axeHeld = await axe(page);
    // Enter on the question it scrolled to goes on to the next, Enter on the last sends.
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await closedAs(page, 'answered-here').waitFor();
    result({ seenBefore, summary, stillOpen, focus, lastVisible, axe: { held: axeHeld, answered: await axe(page) }, errors: page.errors });
    await close();
  },

  // Dismiss with a choice made and text typed asks once more; the second press dismisses.
  async 'dismiss-confirm'() {
    const { context, close } = await launch({ colorScheme: 'dark' });
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    await form.locator('.option').nth(1).click();
    const dismiss = form.locator('button.dismiss');
    await dismiss.click();
    const armed = {
      label: (await dismiss.textContent()).trim(),
      notice: await form.locator('.summary').textContent(),
      open: (await form.getAttribute('data-closed')) === null,
    };
    const axeArmed = await axe(page);
    await dismiss.click();
    await closedAs(page, 'dismissed-here').waitFor();
    result({ armed, axe: { armed: axeArmed, dismissed: await axe(page) }, errors: page.errors });
    await close();
  },

  // Text typed into a question that then closes (the Rust side withdraws it) stays visible,
  // read-only and copyable, with why it closed; the countdown shows while the budget runs.
  async kept() {
    const { context, close } = await launch();
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    const countdown = await form.locator('.countdown').textContent();
    await form.locator('.own-input').first().fill('half of a long reply');
    const axeOpen = await axe(page);
    step('typed');
    await page.locator('form.batch[data-closed]').waitFor();
    const own = form.locator('.own-input').first();
    const copied = await own.evaluate((t) => {
      t.focus();
      t.select();
      return window.getSelection().toString() || t.value.slice(t.selectionStart, t.selectionEnd);
    });
    result({
      countdown,
      kind: await form.getAttribute('data-closed'),
      closed: (await form.locator('.closed-line').textContent()).trim(),
      kept: await form.locator('.kept').isVisible(),
      keptNote: (await form.locator('.kept').textContent()).trim(),
      // The note says the text is above it: the text's box ends before the note's begins.
      textAboveNote: await form.evaluate((f) =>
        f.querySelector('.own-input').getBoundingClientRect().bottom <=
        f.querySelector('.kept').getBoundingClientRect().top),
      text: await own.inputValue(),
      textVisible: await own.isVisible(),
      readOnly: await own.evaluate((t) => t.readOnly && !t.disabled),
      copied,
      countdownHidden: await form.locator('.countdown').isHidden(),
      checked: await form.locator('.choice:checked').count(),
      axe: { open: axeOpen, closed: await axe(page) },
      errors: page.errors,
    });
    await close();
  },

  // An answered card says what was sent, own words included, and the Recommended option that
  // was not picked no longer looks picked; a long question is body text, not a heading.
  async 'closed-answer'() {
    const { context, close } = await launch({ viewport: { width: 390, height: 844 } });
    const page = await open(context, url);
    const form = batches(page).first();
    await form.waitFor();
    const q = (i) => form.locator('.question').nth(i);
    const longQuestion = await q(1).evaluate((n) => ({
      legend: n.querySelector('legend').textContent.length,
      short: n.querySelector('.legend-short').textContent,
      bodyWeight: getComputedStyle(n.querySelector('.long-text')).fontWeight,
      bodyLength: n.querySelector('.long-text').textContent.length,
    }));
    await q(0).locator('.option').nth(1).click();
    await q(1).locator('.own-input').fill('my own words');
    // The long question was never all in view (the fill jumped to its text box): Submit
    // scrolls to the part not yet shown until it all was, then sends.
    for (let i = 0; i < 8 && !(await form.getAttribute('data-closed')); i++) {
      await form.locator('button.submit').click();
      await page.waitForFunction(() => {
        const f = document.querySelector('form.batch');
        // Held back (Submit enabled again, the summary says why) or sent and closed.
        return f.dataset.closed
          || (!f.querySelector('.summary').hidden && !f.querySelector('button.submit').disabled);
      });
    }
    await closedAs(page, 'answered-here').waitFor();
    const recommended = await q(0).locator('.option.recommended').evaluate((o) => ({
      borderLeft: getComputedStyle(o).borderLeftWidth,
      badgeBackground: getComputedStyle(o.querySelector('.badge')).backgroundColor,
      checked: o.querySelector('.choice').checked,
    }));
    result({
      longQuestion,
      closed: (await form.locator('.closed-line').textContent()).trim(),
      sent: await listTexts(form, '.sent'),
      recommended,
      axe: await axe(page),
      errors: page.errors,
    });
    await close();
  },
});

scenarios.axe = axe;
module.exports = scenarios;
