// Drives real headless Chromium (Debian's /usr/bin/chromium) with playwright-core against the
// hub's paged inbox. Spawned by crates/cli/tests/suite/hub_inbox.rs:
//
//   node paging.cjs <login-link> <hub-url> <agent-token> <alpha-token>
//
// Signs in to an inbox of 120 open asks from three agents: groups oldest first with their
// true counts, collapsed to their oldest asks; shows all of one group; an arrival above the
// card being read does not move it; a new agent's ask is answered with one tap; prints
// `RESULT <json>` with what the page showed at each step; any failure exits non-zero.
'use strict';

const fs = require('fs');
const { launch, signedIn } = require('../hub/chromium.cjs');

const WAIT = { timeout: 60000 };

async function main() {
  const [link, hub, token, alphaToken] = process.argv.slice(2);
  const { context, close } = await launch({ width: 1280, height: 800 });
  const page = await signedIn(context, link);
  const { errors } = page;
  await page.waitForSelector('#status:has-text("live")', WAIT);

  // axe-core (tools/node, pinned) over the page as it is: serious and critical violations.
  // Evaluated through the DevTools protocol: the page's CSP stays as it is.
  await page.evaluate(fs.readFileSync(process.env.AXE_CORE, 'utf8'));
  const axe = () => page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => v.id + ': ' + v.nodes.map((n) => n.target.join(' ')).join(', '));
  });
  const cards = () => page.evaluate(() => document.querySelectorAll('article.card').length);
  const look = async () => ({
    cards: await cards(),
    counts: await page.locator('#counts').textContent(),
    groups: await page.locator('h2.agent strong').allTextContents(),
    groupCounts: await page.locator('h2.agent .group-count').allTextContents(),
    more: await page.locator('.group-more:visible').allTextContents(),
    ids: await page.evaluate(() => [...document.querySelectorAll('article.card')].map((c) => Number(c.dataset.id))),
    // Keyboard stops in the open list (a radio group is one).
    tabStops: await page.evaluate(() => {
      const radios = new Set();
      let n = 0;
      for (const e of document.querySelectorAll('#open button, #open input, #open textarea, #open [tabindex]')) {
        if (e.disabled || e.tabIndex < 0 || e.closest('[hidden]') || e.offsetParent === null) continue;
        if (e.type === 'radio') { if (radios.has(e.name)) continue; radios.add(e.name); }
        n += 1;
      }
      return n;
    }),
  });
  const waitCards = async (n, step) => {
    try {
      await page.waitForFunction((k) => document.querySelectorAll('article.card').length === k, n, WAIT);
    } catch (e) {
      throw new Error(step + ': waited for ' + n + ' cards, the page shows ' + JSON.stringify(await look()) + ' errors ' + JSON.stringify(errors));
    }
  };
  const ask = async (tok, question) => {
    const r = await fetch(hub + '/v1/asks', {
      method: 'POST',
      headers: { Authorization: 'Bearer ' + tok, 'Content-Type': 'application/json' },
      body: JSON.stringify({ arguments: { questions: [{ id: 'go', question, options: ['Ship it (Recommended)', 'Hold'] }] } }),
    });
    if (r.status !== 200) throw new Error('the agent could not ask: ' + r.status);
    return (await r.json()).id;
  };

  // Three agents, 40 asks each: each group shows its 3 oldest and a button for the rest.
  await waitCards(9, 'first read');
  const first = await look();
  const axeFirst = await axe();
  await page.locator('.group-more', { hasText: 'from alpha' }).click();
  await waitCards(9 + 37, 'all of alpha');
  const expanded = await look();

  // The human reads beta's first card; alpha (above) gets a new ask: the card stays put.
  const betaCard = page.locator('article.card[data-agent="beta"]').first();
  await betaCard.evaluate((c) => c.scrollIntoView({ block: 'start' }));
  const topBefore = await betaCard.evaluate((c) => c.getBoundingClientRect().top);
  const alphaLate = await ask(alphaToken, 'One more from alpha?');
  await waitCards(expanded.cards + 1, 'alpha asks again');
  const topAfter = await betaCard.evaluate((c) => c.getBoundingClientRect().top);
  const alphaLast = await page.evaluate(() => {
    const c = [...document.querySelectorAll('article.card[data-agent="alpha"]')];
    return Number(c[c.length - 1].dataset.id);
  });

  // The human types into alpha's new card while another ask arrives: the field keeps the
  // keyboard and the text across the live update.
  const own = page.locator(`article.card[data-id="${alphaLate}"] .own-input`);
  await own.click();
  await page.keyboard.type('half typed');
  // A new agent's ask: a new group at the end; one tap on an option's Send answers it.
  const late = await ask(token, 'Ship the late one?');
  await waitCards(expanded.cards + 2, 'live');
  const live = await look();
  const typing = await own.evaluate((t) => ({ focused: document.activeElement === t, value: t.value }));
  const card = page.locator(`article.card[data-id="${late}"]`);
  const preselected = await card.locator('.choice:checked').evaluate((i) => i.value);
  await card.locator('button.quick').nth(1).click();
  await page.locator('#flash', { hasText: 'sent' }).waitFor(WAIT);
  await card.locator('form[data-closed="answered-here"]').waitFor(WAIT);
  await page.waitForFunction(() => {
    const last = [...document.querySelectorAll('h2.agent .group-count')].pop();
    return Boolean(last && last.textContent === 'nothing waiting');
  }, null, WAIT);
  const answered = await look();
  const axeAnswered = await axe();
  const sent = await card.locator('.sent li').allTextContents();
  await page.locator('#history li').first().waitFor({ state: 'attached', ...WAIT });
  const history = await page.locator('#history li').first().textContent();

  // Alpha withdraws the ask the human was typing into: the card closes in place saying so,
  // and the typed text stays, read-only.
  const del = await fetch(hub + '/v1/asks/' + alphaLate, { method: 'DELETE', headers: { Authorization: 'Bearer ' + alphaToken } });
  if (del.status !== 200) throw new Error('the agent could not withdraw: ' + del.status);
  const alphaCard = page.locator(`article.card[data-id="${alphaLate}"]`);
  await alphaCard.locator('form[data-closed]').waitFor(WAIT);
  const withdrawn = {
    kind: await alphaCard.locator('form').getAttribute('data-closed'),
    closed: (await alphaCard.locator('.closed-line').textContent()).trim(),
    text: await own.inputValue(),
    visible: await own.isVisible(),
    readOnly: await own.evaluate((t) => t.readOnly),
    kept: await alphaCard.locator('.kept').isVisible(),
  };
  console.log('RESULT ' + JSON.stringify({
    late, alphaLate, alphaLast, first, expanded, moved: topAfter - topBefore, live, typing, withdrawn, preselected,
    answered, sent, history, axe: { first: axeFirst, answered: axeAnswered }, errors,
  }));
  await close();
}

main().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
