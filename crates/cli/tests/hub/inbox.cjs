// Drives real headless Chromium (Debian's /usr/bin/chromium) with playwright-core against the
// hub's inbox page. Spawned by crates/cli/tests/suite/hub.rs:
//
//   node inbox.cjs answer <login-link> <option-label> [cut]   sign in, answer the only open ask
//       (with `cut`: the first answer's request reaches the hub, its response is cut — the
//       connection reset — the page's reads of what changed are held meanwhile, and the human
//       clicks Send again when the card says to try again)
//   node inbox.cjs again <login-link>                   sign in; on the only open card, read the
//       "Send the same answer again" button, then tap it
//   node inbox.cjs screens <login-link> <dir> <count>   sign in, wait for <count> asks, screenshots
//   node inbox.cjs countdown <login-link> <hub-url>     sign in, read the only card's countdown,
//       type an own answer, then time the ask out as its agent would (DELETE
//       ?reason=timed_out with the agent's token from $AGENT_TOKEN) and read the closed card
//
// Prints `RESULT <json>` (observations the Rust test asserts); any failure exits non-zero.
'use strict';

const path = require('path');
const { launch, signedIn } = require('./chromium.cjs');

async function signIn(context, link) {
  const page = await signedIn(context, link);
  await page.waitForSelector('#status:has-text("live")', { timeout: 60000 });
  return page;
}

async function main() {
  const [mode, link, arg, count] = process.argv.slice(2);
  if (mode === 'answer') {
    const { context, close } = await launch({ width: 1280, height: 800 });
    const page = await signIn(context, link);
    const card = page.locator('article.card').first();
    await card.waitFor({ timeout: 60000 });
    const agent = await page.locator('h2.agent strong').first().textContent();
    await card.locator('label.option', { hasText: arg }).click();
    let cut = null;
    if (count === 'cut') {
      const sent = [];
      // The page's reads of what changed are held until the retry was answered, so the
      // human sees "try again" (not the live stream's account) and clicks Send again.
      let release;
      const released = new Promise((r) => { release = r; });
      let hold = false;
      await page.route(/\/inbox\/(state|asks\/\d+$)/, async (route) => {
        if (hold) await released;
        return route.continue();
      });
      await page.route('**/inbox/asks/*/answer', async (route) => {
        sent.push(route.request().headers()['idempotency-key'] || null);
        if (sent.length > 1) return route.continue();
        hold = true;
        await route.fetch(); // the hub took it; the human never hears
        return route.abort('connectionreset');
      });
      await card.locator('button.submit').click();
      const error = card.locator('.error');
      await error.waitFor({ state: 'visible', timeout: 60000 });
      cut = { error: await error.textContent(), keys: sent };
      await card.locator('button.submit').click();
      await page.locator('#flash', { hasText: 'sent' }).waitFor({ timeout: 60000 });
      release();
    } else {
      await card.locator('button.submit').click();
    }
    const flash = page.locator('#flash', { hasText: 'sent' });
    await flash.waitFor({ timeout: 60000 });
    const note = await flash.textContent();
    // The answered card stays in place, saying what was sent; the ask shows in the history.
    const sent = await card.locator('.sent li').allTextContents();
    await page.locator('#history li').first().waitFor({ state: 'attached', timeout: 60000 });
    const history = await page.locator('#history li').first().textContent();
    // The cut request's own console line is the cut, not a page error.
    const errors = page.errors.filter((e) => !(cut && e.includes('ERR_CONNECTION_RESET')));
    console.log('RESULT ' + JSON.stringify({ agent, note, sent, history, cut, errors }));
    await close();
  } else if (mode === 'again') {
    const { context, close } = await launch({ width: 390, height: 844 });
    const page = await signIn(context, link);
    const card = page.locator('article.card').first();
    await card.waitFor({ timeout: 60000 });
    const button = card.locator('button.send-again');
    await button.waitFor({ timeout: 60000 });
    const offer = await button.textContent();
    // Nothing is sent by showing it: the card is still open.
    const openBefore = !(await card.locator('form.is-closed').count());
    await button.click();
    const flash = page.locator('#flash', { hasText: 'sent' });
    await flash.waitFor({ timeout: 60000 });
    const sent = await card.locator('.sent li').allTextContents();
    console.log('RESULT ' + JSON.stringify({ offer, openBefore, note: await flash.textContent(), sent, errors: page.errors }));
    await close();
  } else if (mode === 'screens') {
    const shots = [];
    for (const [w, h] of [[1280, 800], [390, 844]]) {
      const { context, close } = await launch({ width: w, height: h });
      const page = await signIn(context, link.split(',')[shots.length]);
      await page.waitForFunction((n) => document.querySelectorAll('article.card').length >= n, Number(count), { timeout: 60000 });
      const agents = await page.locator('h2.agent strong').allTextContents();
      const detached = await page.evaluate(() => [...document.querySelectorAll('article.card')]
        .filter((c) => { const b = c.querySelector('.detached'); return b && !b.hidden && b.offsetParent !== null; })
        .map((c) => c.dataset.agent));
      const file = path.join(arg, `hub-inbox-${w}x${h}.png`);
      await page.screenshot({ path: file });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
      shots.push({ file, agents, overflow, detached, errors: page.errors });
      await close();
    }
    console.log('RESULT ' + JSON.stringify(shots));
  } else if (mode === 'countdown') {
    const { context, close } = await launch({ width: 390, height: 844 });
    const page = await signIn(context, link);
    const card = page.locator('article.card').first();
    await card.waitFor({ timeout: 60000 });
    const countdown = card.locator('.countdown');
    await countdown.waitFor({ state: 'visible', timeout: 60000 });
    const first = await countdown.textContent();
    // It counts: the text changes within a few seconds (the clock, not a re-render).
    await page.waitForFunction((t) => {
      const c = document.querySelector('article.card .countdown');
      return c && c.textContent !== t;
    }, first, { timeout: 60000 });
    const later = await countdown.textContent();
    const own = card.locator('.own-input').first();
    await own.click();
    await own.pressSequentially('half a thought');
    const id = await card.getAttribute('data-id');
    const r = await fetch(arg + '/v1/asks/' + id + '?reason=timed_out', {
      method: 'DELETE', headers: { Authorization: 'Bearer ' + process.env.AGENT_TOKEN },
    });
    const withdrawn = (await r.json()).state;
    await card.locator('form.is-closed').waitFor({ state: 'attached', timeout: 60000 });
    const closed = await card.locator('.closed-text').textContent();
    const kept = await own.inputValue();
    const readOnly = await own.evaluate((e) => e.readOnly);
    const countdownHidden = await countdown.evaluate((e) => e.hidden);
    const icon = await card.locator('.closed-icon').textContent();
    const note = card.locator('.kept');
    const keptNote = (await note.isVisible()) ? (await note.textContent()).trim() : null;
    // The note says the text is above it: the text's box ends before the note's begins.
    const textAboveNote = await card.evaluate((c) =>
      c.querySelector('.own-input').getBoundingClientRect().bottom <=
      c.querySelector('.kept').getBoundingClientRect().top);
    console.log('RESULT ' + JSON.stringify({ first, later, withdrawn, closed, icon, kept, keptNote, textAboveNote, readOnly, countdownHidden, errors: page.errors }));
    await close();
  } else if (mode === 'tall-request') {
    // A permission request taller than the screen: Allow (and its one-tap Send) are enabled
    // only once all of the request was in view; a jump to the end that skips the middle is not
    // enough.
    const { context, close } = await launch({ width: 1280, height: 800 });
    const page = await signIn(context, link);
    const card = page.locator('article.card').first();
    await card.waitFor({ timeout: 60000 });
    const allow = card.locator('label.option', { hasText: 'Allow once' });
    const frames = () => page.evaluate(() =>
      new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await page.waitForFunction(() => {
      const c = document.querySelector('article.card .choice');
      return c && c.disabled;
    }, null, { timeout: 60000 });
    const atLoad = {
      choice: await allow.locator('.choice').isDisabled(),
      quick: await allow.locator('.quick').isDisabled(),
    };
    await page.evaluate(() =>
      window.scrollTo({ top: document.documentElement.scrollHeight, behavior: 'instant' }));
    await frames();
    const afterJump = await allow.locator('.choice').isDisabled();
    await page.evaluate(() => window.scrollTo({ top: 0, behavior: 'instant' }));
    await frames();
    let steps = 0;
    while (await page.evaluate(() =>
      window.scrollY + window.innerHeight < document.documentElement.scrollHeight - 2)) {
      await page.evaluate(() => window.scrollBy({ top: window.innerHeight * 0.8, behavior: 'instant' }));
      await frames();
      steps += 1;
      if (steps > 100) throw new Error('never reached the end');
    }
    const afterReading = {
      choice: await allow.locator('.choice').isEnabled(),
      quick: await allow.locator('.quick').isEnabled(),
    };
    await allow.locator('.quick').click();
    const flash = page.locator('#flash', { hasText: 'sent' });
    await flash.waitFor({ timeout: 60000 });
    console.log('RESULT ' + JSON.stringify({ atLoad, afterJump, afterReading, errors: page.errors }));
    await close();
  } else {
    throw new Error('unknown mode ' + mode);
  }
}

main().catch((e) => { console.error(e && e.stack || String(e)); process.exit(1); });
