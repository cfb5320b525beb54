// Drives real headless Chromium (Debian's /usr/bin/chromium) with playwright-core against the
// hub's inbox. Spawned by crates/cli/tests/suite/hub_inbox.rs:
//
//   node corpus.cjs <login-link> <cards>
//
// Signs in, waits for <cards> cards, and prints `RESULT <json>`: per card (by ask id) what its
// questions, project and group heading show and which way each runs (dir="auto").
'use strict';

const { launch, signedIn } = require('../hub/chromium.cjs');

const WAIT = { timeout: 60000 };

async function main() {
  const [link, count] = process.argv.slice(2);
  const { context, close } = await launch({ width: 1280, height: 800 });
  const page = await signedIn(context, link);
  const { errors } = page;
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
  await close();
}

main().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
