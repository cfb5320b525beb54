// Drives real headless Chromium (Debian's /usr/bin/chromium) with playwright-core for the web
// answerer's browser tests. Spawned by crates/web/tests/suite/browser.rs:
//
//   node scenarios.cjs <scenario> <url> [extra args…]
//
// Protocol on stdio, one line each: the script prints `STEP <name>` when it reaches a point
// the Rust side waits for, reads `GO` on stdin where it must wait for the Rust side, and ends
// with `RESULT <json>` (observations the Rust test asserts). Any failure exits non-zero with
// the reason on stderr.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const readline = require('readline');

const playwrightPath = process.env.PLAYWRIGHT_CORE;
if (!playwrightPath) throw new Error('PLAYWRIGHT_CORE must name the playwright-core package directory');
const { chromium } = require(playwrightPath);

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  // Lets a test reach the server under a foreign name, as a DNS-rebinding page would.
  '--host-resolver-rules=MAP rebind.test 127.0.0.1',
];

/** A fresh browser profile (new --user-data-dir) with one context. */
async function launch(options = {}) {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ask-user-web-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: options.viewport || { width: 1000, height: 800 },
    colorScheme: options.colorScheme || 'light',
    deviceScaleFactor: options.deviceScaleFactor || 1,
    hasTouch: options.hasTouch || false,
  });
  const close = async () => {
    await context.close();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  };
  return { context, close };
}

/** Opens the page and collects console errors and page errors (CSP violations land here). */
async function open(context, url) {
  const page = await context.newPage();
  page.errors = [];
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  page.on('pageerror', (e) => page.errors.push(String(e)));
  await page.goto(url);
  return page;
}

function step(name) {
  process.stdout.write('STEP ' + name + '\n');
}

const lines = readline.createInterface({ input: process.stdin });
const waiting = [];
const buffered = [];
lines.on('line', (line) => {
  if (waiting.length) waiting.shift()(line); else buffered.push(line);
});

/** Waits for the Rust side to write `GO`. */
function waitGo() {
  return new Promise((resolve, reject) => {
    const check = (line) => (line.trim() === 'GO' ? resolve() : reject(new Error('expected GO, got ' + line)));
    if (buffered.length) check(buffered.shift()); else waiting.push(check);
  });
}

function result(value) {
  process.stdout.write('RESULT ' + JSON.stringify(value) + '\n');
}

function assert(condition, message) {
  if (!condition) throw new Error('assertion failed: ' + message);
}

/** Runs a scenario function with a launched browser and exits with its status. */
function run(body) {
  body()
    .then(() => { lines.close(); process.exit(0); })
    .catch((e) => { process.stderr.write(String(e && e.stack || e) + '\n'); process.exit(1); });
}

module.exports = { launch, open, step, waitGo, result, assert, run };
