// Drives real headless Chromium (Debian's /usr/bin/chromium) with playwright-core against the
// hub's paged inbox. Spawned by crates/cli/tests/hub_inbox.rs:
//
//   node paging.cjs <login-link> <hub-url> <agent-token> <open-count>
//
// Signs in, reads the first page, shows more, has an agent ask while the page is open (live
// update), answers the newest card through the shared card, and prints `RESULT <json>` with
// what the page showed at each step; any failure exits non-zero.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require(process.env.PLAYWRIGHT_CORE);

const WAIT = { timeout: 60000 };

async function main() {
  const [link, hub, token, count] = process.argv.slice(2);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ask-user-hub-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
    viewport: { width: 1280, height: 800 },
    colorScheme: 'light',
  });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(link);
  await Promise.all([page.waitForURL((u) => u.pathname === '/'), page.click('#signin')]);
  await page.waitForSelector('#status:has-text("live")', WAIT);

  const cards = () => page.evaluate(() => document.querySelectorAll('article.card').length);
  const look = async () => ({
    cards: await cards(),
    counts: await page.locator('#counts').textContent(),
    more: await page.locator('#more').isVisible(),
    groups: await page.locator('h2.agent').allTextContents(),
    first: await page.evaluate(() => Number(document.querySelector('article.card').dataset.id)),
    ids: await page.evaluate(() => [...document.querySelectorAll('article.card')].map((c) => Number(c.dataset.id))),
  });
  const waitCards = async (n, step) => {
    try {
      await page.waitForFunction((k) => document.querySelectorAll('article.card').length === k, n, WAIT);
    } catch (e) {
      throw new Error(step + ': waited for ' + n + ' cards, the page shows ' + JSON.stringify(await look()) + ' errors ' + JSON.stringify(errors));
    }
  };

  await waitCards(Math.min(50, Number(count)), 'first page');
  const first = await look();
  await page.click('#more');
  await waitCards(Math.min(100, Number(count)), 'show more');
  const second = await look();

  // An agent asks while the page is open: the new ask comes first, nothing older is lost.
  const r = await fetch(hub + '/v1/asks', {
    method: 'POST',
    headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
    body: JSON.stringify({ arguments: { questions: [{ id: 'go', question: 'Ship the late one?', options: ['Ship it (Recommended)', 'Hold'] }] } }),
  });
  if (r.status !== 200) throw new Error('the agent could not ask: ' + r.status);
  const late = (await r.json()).id;
  await waitCards(second.cards + 1, 'live');
  const live = await look();
  // The shared card preselects the recommended option; Submit sends it.
  const card = page.locator(`article.card[data-id="${late}"]`);
  const preselected = await card.locator('.choice:checked').evaluate((i) => i.value);
  await card.locator('button.submit').click();
  await page.locator('#flash', { hasText: 'sent' }).waitFor(WAIT);
  await waitCards(second.cards, 'answered');
  const answered = await look();
  console.log('RESULT ' + JSON.stringify({ late, first, second, live, preselected, answered, errors }));
  await context.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
