// Shared by the hub's browser scripts (hub/inbox.cjs, hub_inbox/*.cjs): real headless Chromium
// (Debian's /usr/bin/chromium) driven by playwright-core, and signing in with a login link.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require(process.env.PLAYWRIGHT_CORE);

// A fresh browser (its own profile directory) with this viewport; `close` ends it and removes
// the profile.
async function launch(viewport) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ask-user-hub-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--no-first-run'],
    viewport,
    colorScheme: 'light',
  });
  return { context, close: async () => { await context.close(); fs.rmSync(dir, { recursive: true, force: true }); } };
}

// A new page of `context` signed in with the login `link` (on the inbox once it returns); its
// console errors and uncaught exceptions collect in `page.errors`.
async function signedIn(context, link) {
  const page = await context.newPage();
  page.errors = [];
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  page.on('pageerror', (e) => page.errors.push(String(e)));
  await page.goto(link);
  await Promise.all([page.waitForURL((u) => u.pathname === '/'), page.click('#signin')]);
  return page;
}

module.exports = { launch, signedIn };
