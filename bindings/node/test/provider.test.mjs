// The published reference tool (@deepseek-ai/dsh-tool-ask-user, pinned) running in the
// published ToolRuntime, with askUser() as its userQuestions provider, against a real
// `ask-user hub serve`; the human answers on the inbox page in real headless Chromium (one
// session, also showing a plan review) or over the page's own answer endpoint. Run by crates/conformance (tests/suite/harness_ts.rs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";
import * as askUserTool from "@deepseek-ai/dsh-tool-ask-user";
import { askUser, command, packagedBinary, toArguments, AskUserSetupError } from "../lib/index.js";
import {
  BIN, answer, cleanEnv, dismiss, harness, hubHarness, openAsks, referenceText, startHub, track, until, DEADLINE_MS,
} from "./support.mjs";

const ABORTED = "ask_user_question was aborted before the user answered";

let hub;
before(async () => { hub = await startHub(); });
after(async () => { await hub?.close(); });

/** Waits until exactly one ask is open in the inbox and `probe(ask)` holds; that ask. */
async function theOpenAsk(what, probe = () => true) {
  return until(what, async () => {
    const open = await openAsks(hub);
    return open.length === 1 && probe(open[0]) ? open[0] : null;
  });
}

test("the reference tool returns the human's inbox answer, byte for byte what it renders from its own stand-in; a plan review shows its plan", async () => {
  const args = { questions: [
    { id: "db", header: "Database", question: "Which database should the service use?", options: [
      { label: "PostgreSQL (Recommended)", description: "Relational, already run by the team." },
      { label: "SQLite", description: "Embedded, no server to operate." } ] },
    { id: "features", question: "Which features ship in v1?", multi_select: true, options: [
      { label: "Auth" }, { label: "Billing" }, { label: "Search" } ] },
    { id: "name", question: "What should the service be called?" },
    { id: "owner", question: "Who owns it on call?" },
  ] };
  const agent = await hubHarness(hub);
  const call = agent.call(args);
  const ask = await theOpenAsk("the batch shows in the inbox");
  assert.equal(ask.agent, "ts-harness");
  assert.deepEqual(ask.questions.map((q) => [q.id, q.multi_select]), [["db", false], ["features", true], ["name", false], ["owner", false]]);

  const dir = mkdtempSync(join(tmpdir(), "ask-user-ts-chromium-"));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
      "--disable-component-update", "--no-first-run"],
    viewport: { width: 1280, height: 800 },
  });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(hub.loginLink());
    await Promise.all([page.waitForURL((u) => u.pathname === "/"), page.click("#signin")]);
    const card = page.locator("article.card").first();
    await card.waitFor({ timeout: DEADLINE_MS });
    const questions = card.locator("fieldset.question");
    await questions.nth(0).locator("label.option", { hasText: "SQLite" }).click();
    await questions.nth(1).locator("label.option", { hasText: "Auth" }).click();
    await questions.nth(1).locator("label.option", { hasText: "Search" }).click();
    await questions.nth(1).locator(".own-input").fill("Audit log");
    await questions.nth(2).locator(".own-input").fill("billing-api");
    await questions.nth(3).locator("button.skip").click();
    await card.locator("button.submit").click();
    await page.locator("#flash", { hasText: "sent" }).waitFor({ timeout: DEADLINE_MS });
    // The answered card stays in place, closed, saying what was sent.
    await card.locator("form.is-closed").waitFor({ timeout: DEADLINE_MS });

    // A plan review (what the harness's plan mode asks, straight through the provider) on the
    // same page: the plan as the question's detail, approve / keep planning.
    const plan = "1. Add the billing_v2 flag.\n2. Migrate the invoices table.\n3. Roll out to staging.";
    const review = askUser(hub.agent).ask({ questions: [{
      id: "plan", question: "Approve this plan?", detail: plan,
      options: [{ label: "Approve" }, { label: "Keep planning" }],
      intent: { kind: "plan-review", approve: "Approve" },
    }] });
    const reviewCard = page.locator("article.card:has(form:not(.is-closed))").first();
    await reviewCard.waitFor({ timeout: DEADLINE_MS });
    assert.equal(await reviewCard.locator("legend .chip").textContent(), "Plan review");
    // A question of several lines reads as body text below a short legend.
    assert.equal(await reviewCard.locator(".long-text").innerText(), `Approve this plan?\n\n${plan}`);
    assert.deepEqual(await reviewCard.locator("label.option .desc").allTextContents(), ["Approve the plan and start.", "Keep planning."]);
    await reviewCard.locator("label.option", { hasText: "Approve" }).click();
    await reviewCard.locator("button.submit").click();
    assert.deepEqual(await review, { answers: [{ id: "plan", selected: ["Approve"] }] });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    rmSync(dir, { recursive: true, force: true });
  }

  const result = await call;
  assert.equal(result.isError, false);
  const human = [
    { id: "db", selected: ["SQLite"] },
    { id: "features", selected: ["Auth", "Search"], custom: "Audit log" },
    { id: "name", selected: [], custom: "billing-api" },
    { id: "owner", selected: [] },
  ];
  const text = result.content[0].text;
  assert.equal(text, await referenceText(args, human));
  assert.equal(text, '{"answers":[{"id":"db","selected":["SQLite"]},{"id":"features","selected":["Auth","Search"],"custom":"Audit log"},{"id":"name","selected":[],"custom":"billing-api"},{"id":"owner","selected":[]}]}');
});

// The routes an abort and a kill -9 are tested on: an agent on the hub's machine asking through
// the hub's store (`--via inbox`; no key: ask-user's own scope finds the detached ask), and an
// agent asking the hub over HTTP (`--hub URL`; the ask-user binary detaches a hub ask when its
// caller goes away). The hub re-attaches by key only, so that agent gives one: the published
// tool passes no tool-call id, and identity is never read from the questions.
const ROUTES = [
  ["the hub's store (--via inbox)", (h) => h.local],
  ["the hub's agent API (--hub)", (h) => ({ ...h.agent, key: "session-7" })],
];

for (const [route, optionsOf] of ROUTES) {
  test(`${route}: an abort detaches the ask, and the same call asked again re-attaches and gets the answer`, async () => {
    const args = { questions: [{ id: "go", question: `Deploy the billing service now? (${route})`, options: [{ label: "Yes" }, { label: "No" }] }] };
    const agent = await harness(askUser(optionsOf(hub)));
    const turn = new AbortController();
    const first = agent.call(args, turn.signal);
    const ask = await theOpenAsk("the ask is open and attached", (a) => a.attached);
    turn.abort();
    const aborted = await first;
    assert.equal(aborted.isError, true);
    // The runtime keeps the provider's own error for a started call: ASK_ABORTED, its text.
    assert.equal(aborted.content[0].text, `Error: ${ABORTED}`);
    assert.equal(aborted.error.info?.code, "ASK_ABORTED");
    await theOpenAsk("the ask stays open, detached", (a) => a.id === ask.id && !a.attached);

    // Straight through the provider: the rejection carries the harness's class and code.
    const direct = new AbortController();
    const pending = askUser(optionsOf(hub)).ask({ questions: [{ id: "go", question: args.questions[0].question, options: args.questions[0].options }], signal: direct.signal });
    await theOpenAsk("the provider re-attached to the same ask", (a) => a.id === ask.id && a.attached);
    direct.abort();
    await assert.rejects(pending, { name: "UserQuestionError", code: "ASK_ABORTED", message: ABORTED });
    await theOpenAsk("detached again", (a) => a.id === ask.id && !a.attached);

    const again = agent.call(args);
    await theOpenAsk("the same call re-attached to the same ask", (a) => a.id === ask.id && a.attached);
    assert.equal((await answer(hub, ask.id, [{ id: "go", selected: ["No"] }])).status, 200);
    const result = await again;
    assert.equal(result.content[0].text, '{"answers":[{"id":"go","selected":["No"]}]}');
    assert.equal(result.content[0].text, await referenceText(args, [{ id: "go", selected: ["No"] }]));
  });

  test(`${route}: kill -9 of the harness process, then the same call from a new process gets the human's answer`, async () => {
    const args = { questions: [{ id: "region", question: `Which region should host the replica? (${route})`, options: [{ label: "eu-west-1 (Recommended)" }, { label: "us-east-1" }] }] };
    const { token, binary, env, ...options } = optionsOf(hub);
    const spawnHarness = () => {
      const child = track(spawn(process.execPath, [new URL("./harness-child.mjs", import.meta.url).pathname], {
        env: { ...cleanEnv(hub.dir), ASK_USER_BIN: BIN, TEST_OPTIONS: JSON.stringify(options), TEST_ARGS: JSON.stringify(args), ...(token ? { TEST_HUB_TOKEN: token } : {}) },
        stdio: ["ignore", "pipe", "pipe"],
      }));
      let out = "";
      let err = "";
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (c) => { out += c; });
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (c) => { err += c; });
      const ended = new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, out, err })));
      return { child, ended };
    };
    const first = spawnHarness();
    const ask = await theOpenAsk("the first harness's ask is open and attached", (a) => a.attached);
    first.child.kill("SIGKILL");
    assert.equal((await first.ended).signal, "SIGKILL");
    // Its ask-user process sees its stdout close, detaches the ask and ends.
    await theOpenAsk("the killed harness's ask stays open, detached", (a) => a.id === ask.id && !a.attached);

    const second = spawnHarness();
    await theOpenAsk("the new harness re-attached to the same ask", (a) => a.id === ask.id && a.attached);
    assert.equal((await answer(hub, ask.id, [{ id: "region", selected: ["us-east-1"] }])).status, 200);
    const { code, out, err } = await second.ended;
    assert.equal(code, 0, err);
    assert.equal(out, await referenceText(args, [{ id: "region", selected: ["us-east-1"] }]));
    assert.equal(out, '{"answers":[{"id":"region","selected":["us-east-1"]}]}');
  });
}

test("two live calls of one session asking the same questions are two asks: identity is given, never read from the questions", async () => {
  // What the published tool sends (0.0.1-rc.1 and 0.1.0-rc.8 alike): the questions, the tool
  // call's agent, the turn's signal; no tool-call id. No key is given either.
  const session = { id: "session-two-live" };
  const questions = [{ id: "go", question: "Ship the hotfix to production now? (two live calls)", options: [{ label: "Yes" }, { label: "No" }] }];
  const provider = askUser(hub.agent);
  const turns = [new AbortController(), new AbortController()];
  const calls = turns.map((turn) => provider.ask({ questions, agent: session, signal: turn.signal }));
  try {
    const asks = await until("two asks are open", async () => {
      const open = await openAsks(hub);
      return open.length === 2 ? open : null;
    });
    assert.equal((await answer(hub, asks[0].id, [{ id: "go", selected: ["Yes"] }])).status, 200);
    assert.equal((await answer(hub, asks[1].id, [{ id: "go", selected: ["No"] }])).status, 200);
    const got = (await Promise.all(calls)).map((a) => a.answers[0].selected[0]);
    assert.deepEqual(got.sort(), ["No", "Yes"], "each call got the answer given to its own ask");
  } finally {
    // A failure leaves no ask-user process behind.
    for (const turn of turns) turn.abort();
    await Promise.allSettled(calls);
  }
  assert.equal(command({ env: {} }, { questions, agent: session }).env.ASK_USER_CALL_ID, undefined);
});

test("with neither a key nor a call id, an abort detaches the ask; the retry is a new call", async () => {
  const session = { id: "session-abort-retry" };
  const questions = [{ id: "go", question: "Ship the hotfix to production now? (no key)", options: [{ label: "Yes" }, { label: "No" }] }];
  const provider = askUser(hub.agent);
  const turn = new AbortController();
  const first = provider.ask({ questions, agent: session, signal: turn.signal });
  const ask = await theOpenAsk("the ask is open and attached", (a) => a.attached);
  turn.abort();
  await assert.rejects(first, { name: "UserQuestionError", code: "ASK_ABORTED" });
  await theOpenAsk("the ask stays open, detached", (a) => a.id === ask.id && !a.attached);
  // The human answers the detached ask; that answer is kept for a retry of the same call, but
  // nothing says the retry is the same call: it asks anew (give a `key` to re-attach).
  assert.equal((await answer(hub, ask.id, [{ id: "go", selected: ["No"] }])).status, 200);
  const retry = new AbortController();
  const again = provider.ask({ questions, agent: session, signal: retry.signal });
  try {
    const fresh = await theOpenAsk("the retry is a new ask", (a) => a.id !== ask.id && a.attached);
    assert.equal((await answer(hub, fresh.id, [{ id: "go", selected: ["Yes"] }])).status, 200);
    assert.deepEqual(await again, { answers: [{ id: "go", selected: ["Yes"] }] });
  } finally {
    retry.abort();
    await Promise.allSettled([again]);
  }
});

test("the human's dismissal and ask-user's own refusal reach the model as ask-user prints them, with the harness's codes", async () => {
  const agent = await hubHarness(hub);
  const args = { questions: [{ id: "drop", question: "Drop the staging database?", options: [{ label: "Yes" }, { label: "No" }] }] };
  const call = agent.call(args);
  const ask = await theOpenAsk("the question is open", (a) => a.attached);
  assert.equal(await dismiss(hub, ask.id), 200);
  const dismissed = await call;
  assert.equal(dismissed.isError, true);
  assert.equal(dismissed.error.info?.code, "ASK_CANCELLED");
  const text = dismissed.content[0].text;
  // ask-user-core's DISMISSED_TEXT (crates/core/src/outcome.rs), byte for byte.
  assert.equal(text, "Error: the user dismissed the questions without answering; do not assume an answer. Continue without it, or ask in plain text if you cannot go on.");

  // The same outcome from the binary alone, and what the model reads through the runtime: one text.
  const direct = await import("node:child_process").then(({ spawnSync }) => spawnSync(BIN, ["ask", "--via", "none", "--store", "memory", "-"], {
    input: JSON.stringify({ questions: [{ id: "a", question: "Q?" }, { id: "a", question: "R?" }] }), env: cleanEnv(hub.dir), encoding: "utf8",
  }));
  assert.equal(direct.status, 3);
  // Duplicate ids pass the reference's validator; ask-user refuses them (docs/contract.md §3).
  const refused = await agent.call({ questions: [{ id: "a", question: "Q?" }, { id: "a", question: "R?" }] });
  assert.equal(refused.error.info?.code, "INVALID_ARGS");
  assert.equal(refused.content[0].text, direct.stdout);
});

test("the other outcomes render as the reference renders a provider's error, with ask-user's texts and the harness's codes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "ask-user-ts-outcomes-"));
  try {
    const args = { questions: [{ id: "go", question: "Go?" }] };
    const base = { binary: BIN, store: "memory", env: cleanEnv(dir), cwd: dir };
    const none = askUser({ ...base, via: ["none"] });
    const nobody = "no way to ask the user is available; ask your question in plain text in your reply instead.";
    await assert.rejects(none.ask(toRequest(args)), { name: "UserQuestionError", code: "NO_PROVIDER", message: nobody });
    const tool = await harness(none);
    assert.deepEqual((await tool.call(args)).content, [{ type: "text", text: `Error: ${nobody}` }]);

    // The provider is a plain {ask}: it also serves the tool applied to a bare context.
    let definition;
    askUserTool.apply({ tools: { register(d) { definition = d; return () => {}; } }, userQuestions: none });
    await assert.rejects(definition.execute(args, { signal: new AbortController().signal }), { code: "NO_PROVIDER", message: nobody });

    const gone = new AbortController();
    gone.abort();
    await assert.rejects(none.ask({ ...toRequest(args), signal: gone.signal }), { code: "ASK_ABORTED", message: ABORTED });

    // stderr reaches the harness's callback, never the model.
    let notes = "";
    const noted = askUser({ ...base, store: `sqlite:${join(dir, "s.sqlite3")}`, via: ["inbox"], timeout: "1s", token: "auh_secret", onStderr: (t) => { notes += t; } });
    await assert.rejects(noted.ask(toRequest(args)), (e) => e.code === "ASK_TIMED_OUT" && e.message.startsWith("no answer within 1s"));
    assert.match(notes, /inbox/);

    const missing = askUser({ ...base, binary: join(dir, "no-such-ask-user") });
    await assert.rejects(missing.ask(toRequest(args)), (e) => e.code === "NO_PROVIDER" && e.message.startsWith("no way to ask the user is available"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a misconfiguration throws for the developer with its cause, never NO_PROVIDER for the model", async () => {
  assert.throws(() => askUser({ via: ["hubb"] }), {
    name: "AskUserSetupError",
    message: 'askUser: unknown via "hubb"; use one or more of: terminal, web, inbox, hub, none',
  });
  const args = { questions: [{ id: "go", question: "Go?" }] };
  const setupError = (pattern) => (e) => {
    assert.ok(e instanceof AskUserSetupError, `${e.name}: ${e.message}`);
    assert.match(e.message, pattern);
    assert.ok(e.cause instanceof Error && e.cause.message !== "", "the cause is ask-user's own words");
    return true;
  };
  // A token the hub does not know.
  const wrong = askUser({ ...hub.agent, token: "auh_wrong" });
  await assert.rejects(wrong.ask(toRequest(args)), setupError(/refused the ask: unauthorized/));
  // A hub nobody listens at.
  const down = askUser({ ...hub.agent, hub: "http://127.0.0.1:9" });
  await assert.rejects(down.ask(toRequest(args)), setupError(/no hub reachable \(http:\/\/127\.0\.0\.1:9/));
  // A flag ask-user refuses.
  const refused = askUser({ ...hub.agent, timeout: "soon" });
  await assert.rejects(refused.ask(toRequest(args)), setupError(/refused this provider's configuration: .*soon/));
  // Through the reference tool the model is not told to ask in plain text instead.
  const tool = await harness(wrong);
  const result = await tool.call(args);
  assert.equal(result.isError, true);
  assert.doesNotMatch(result.content[0].text, /plain text/);
  assert.equal(result.error.info, undefined, "not a UserQuestionError code");
});

test("the request reaches ask-user in its model-facing shape: multiSelect as multi_select, labels untouched", () => {
  assert.deepEqual(toArguments({ questions: [
    { id: "a", question: "Pick", header: "H", multiSelect: true, options: [{ label: "X (Recommended)", description: "d" }, { label: "Y" }] },
    { id: "b", question: "Free" },
  ] }), { questions: [
    { id: "a", question: "Pick", header: "H", options: [{ label: "X (Recommended)", description: "d" }, { label: "Y" }], multi_select: true },
    { id: "b", question: "Free" },
  ] });
});

test("the token and the call key travel in the environment, never in argv", () => {
  const request = { questions: [{ id: "a", question: "Q?" }] };
  const { args, env } = command({ via: ["hub", "web"], hub: ["https://a.example", "https://b.example"], token: "auh_secret", key: "call-7", session: "s1", timeout: "5m", env: { PATH: "/bin" } }, request);
  assert.deepEqual(args, ["ask", "--via", "hub,web", "--hub", "https://a.example,https://b.example", "--timeout", "5m", "-"]);
  assert.deepEqual(env, { PATH: "/bin", ASK_USER_HUB_TOKEN: "auh_secret", ASK_USER_SESSION: "s1", ASK_USER_CALL_ID: "call-7" });
  // A call id the request carries is the key when none is given; a key function wins over it.
  assert.equal(command({ env: {} }, { ...request, wait: { callId: "w-1" } }).env.ASK_USER_CALL_ID, "w-1");
  assert.equal(command({ env: {}, key: (r) => `k-${r.questions[0].id}` }, { ...request, callId: "c-1" }).env.ASK_USER_CALL_ID, "k-a");
});

test("the binary of the npm package ask-user is found beside the provider, hoisted or nested", () => {
  const platform = `@ask-user/${process.platform}-${process.arch}`;
  // As npm lays out a project (hoisted) and a global install (nested under ask-user); and
  // without the platform package (npm --omit=optional, or a platform with no binary).
  for (const layout of ["hoisted", "nested", "none"]) {
    const dir = mkdtempSync(join(tmpdir(), "ask-user-ts-packaged-"));
    try {
      const modules = join(dir, "node_modules");
      const write = (path, value) => {
        mkdirSync(join(path, ".."), { recursive: true });
        writeFileSync(path, JSON.stringify(value));
      };
      write(join(modules, "ask-user/package.json"), { name: "ask-user", version: "0.1.0" });
      const found = () => packagedBinary(pathToFileURL(join(dir, "app.js")).href);
      if (layout === "none") {
        assert.equal(found(), undefined);
        continue;
      }
      const root = layout === "hoisted" ? modules : join(modules, "ask-user/node_modules");
      write(join(root, platform, "package.json"), { name: platform, version: "0.1.0" });
      mkdirSync(join(root, platform, "bin"));
      symlinkSync(BIN, join(root, platform, "bin/ask-user"));
      assert.equal(found(), join(root, platform, "bin/ask-user"), layout);
      const version = spawnSync(found(), ["--version"], { encoding: "utf8", env: cleanEnv(dir) });
      assert.match(version.stdout, /^ask-user \d+\.\d+\.\d+/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

function toRequest(args) {
  return { questions: args.questions.map((q) => ({ id: q.id, question: q.question })) };
}
