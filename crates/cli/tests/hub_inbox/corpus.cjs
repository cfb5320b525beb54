// Drives real headless Chromium (Debian's /usr/bin/chromium) with playwright-core against the
// hub's inbox. Spawned by crates/cli/tests/suite/hub_inbox.rs:
//
//   node corpus.cjs <login-link> <cards>
//
// Signs in, waits for <cards> cards, and prints `RESULT <json>`: per card (by ask id) what its
// questions, project and group heading show and which way each runs (dir="auto").
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require(process.env.PLAYWRIGHT_CORE);

const WAIT = { timeout: 60000 };

async function main() {
  const [link, count] = process.argv.slice(2);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ask-user-hub-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
    viewport: { width: 1280, height: 800 },
  });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(link);
  await Promise.all([page.waitForURL((u) => u.pathname === '/'), page.click('#signin')]);
  await page.waitForFunction((k) => document.querySelectorAll('article.card').length === k, Number(count), WAIT);
  const cards = await page.evaluate(() => Array.from(document.querySelectorAll('article.card'), (card) => {
    const shown = (e) => ({ text: e.textContent, direction: getComputedStyle(e).direction });
    const project = card.querySelector('.meta .project');
    return {
      id: Number(card.dataset.id),
      project: project ? shown(project) : null,
      questions: Array.from(card.querySelectorAll('fieldset.question'), (q) => {
        const long = q.querySelector('.long-text');
        return shown(long && !long.hidden ? long : q.querySelector('.text'));
      }),
    };
  }));
  const groups = await page.evaluate(() => Array.from(document.querySelectorAll('h2.agent strong'),
    (e) => ({ text: e.textContent, direction: getComputedStyle(e).direction })));
  console.log('RESULT ' + JSON.stringify({ cards, groups, errors }));
  await context.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

main().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
