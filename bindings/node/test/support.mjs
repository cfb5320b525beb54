// Test support: a real `ask-user hub serve` on a temp store, the human's signed-in session on
// it (HTTP, and real headless Chromium), and a real harness context (cordis + the published
// ToolRuntime, UserQuestionService and ask_user_question tool) whose provider is askUser().
// Every process started here is killed when the test process ends.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Context } from "@deepseek-ai/cordis";
import { SystemPrompt } from "@deepseek-ai/dsh-system-prompt";
import { ToolRuntime } from "@deepseek-ai/dsh-tools";
import { UserQuestionService } from "@deepseek-ai/dsh-user-questions";
import * as askUserTool from "@deepseek-ai/dsh-tool-ask-user";
import { askUser } from "../lib/index.js";

/** Generous: the machine is small and shared. */
export const DEADLINE_MS = 90_000;

export const BIN = process.env.ASK_USER_BIN;
if (!BIN) throw new Error("ASK_USER_BIN must name the ask-user binary");

const children = new Set();
/** Spawns a process that is killed (SIGKILL) when this test process exits. */
export function track(child) {
  children.add(child);
  child.on("exit", () => children.delete(child));
  return child;
}
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/** The environment every spawned ask-user gets: nothing inherited but PATH, HOME in a temp dir. */
export function cleanEnv(dir) {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, XDG_STATE_HOME: join(dir, "state"), XDG_CONFIG_HOME: join(dir, "config") };
}

function run(args, env) {
  const out = spawnSync(BIN, args, { env, encoding: "utf8" });
  if (out.status !== 0) throw new Error(`ask-user ${args[0]} ${args[1]}: ${out.stderr}`);
  return out.stdout.trim();
}

/** Waits for `probe()` to return a truthy value, polling; fails after the deadline with `what`. */
export async function until(what, probe, ms = DEADLINE_MS) {
  const start = Date.now();
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() - start > ms) throw new Error(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A hub on a temp SQLite store, one agent token, and the human's session cookie. */
export async function startHub() {
  const dir = mkdtempSync(join(tmpdir(), "ask-user-ts-"));
  const env = cleanEnv(dir);
  const store = `sqlite:${join(dir, "hub.sqlite3")}`;
  const token = run(["hub", "token", "add", "ts-harness", "--store", store], env);
  const child = track(spawn(BIN, ["hub", "serve", "--listen", "127.0.0.1:0", "--store", store], {
    env, stdio: ["ignore", "ignore", "pipe"],
  }));
  let log = "";
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the hub printed no address: ${log}`)), DEADLINE_MS);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk) => {
      log += chunk;
      const m = /serving on (\S+)/.exec(log);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on("exit", (code) => reject(new Error(`the hub exited (${code}): ${log}`)));
  });
  const loginLink = () => run(["hub", "login-link", "--store", store, "--url", url], env);
  const hub = {
    dir, env, url, token, loginLink,
    store,
    /** An agent of this hub: `--hub` with its token, its own memory store, a clean environment. */
    agent: { via: ["hub"], hub: url, token, store: "memory", binary: BIN, env: cleanEnv(dir), cwd: dir },
    /** An agent on the hub's machine: `--via inbox` on the hub's own store (headless asker). */
    local: { via: ["inbox"], store, binary: BIN, env: cleanEnv(dir), cwd: dir },
    async close() { child.kill("SIGKILL"); rmSync(dir, { recursive: true, force: true }); },
  };
  hub.cookie = await signIn(url, loginLink());
  return hub;
}

async function signIn(url, link) {
  const resp = await fetch(link, { method: "POST", headers: { Origin: url }, redirect: "manual" });
  if (resp.status !== 303) throw new Error(`sign-in: ${resp.status}`);
  return resp.headers.get("set-cookie").split(";")[0];
}

/** The inbox's open asks, as the signed-in human's page reads them. */
export async function openAsks(hub) {
  const resp = await fetch(`${hub.url}/inbox/state`, { headers: { Cookie: hub.cookie } });
  if (resp.status !== 200) throw new Error(`inbox state: ${resp.status}`);
  return (await resp.json()).open;
}

/** The human answers ask `id` over the inbox's own endpoint (as the page does). */
export async function answer(hub, id, answers) {
  const resp = await fetch(`${hub.url}/inbox/asks/${id}/answer`, {
    method: "POST",
    headers: { Cookie: hub.cookie, Origin: hub.url, "Content-Type": "application/json" },
    body: JSON.stringify({ answers }),
  });
  return { status: resp.status, body: await resp.json() };
}

/** The human dismisses ask `id` over the inbox's own endpoint. */
export async function dismiss(hub, id) {
  const resp = await fetch(`${hub.url}/inbox/asks/${id}/dismiss`, {
    method: "POST",
    headers: { Cookie: hub.cookie, Origin: hub.url, "Content-Type": "application/json" },
    body: "{}",
  });
  return resp.status;
}

/**
 * A real harness: cordis context with the published ToolRuntime, UserQuestionService and
 * ask_user_question tool; `provider` registered as the context's userQuestions provider.
 * `call(args, signal)` runs one model tool call through the runtime and returns its result.
 */
export async function harness(provider) {
  const ctx = new Context();
  for (const plugin of [SystemPrompt, ToolRuntime, UserQuestionService, askUserTool]) {
    await ctx.plugin(plugin).await();
  }
  ctx.userQuestions.registerProvider(provider);
  let n = 0;
  return {
    ctx,
    call: (args, signal = new AbortController().signal) =>
      ctx.tools.execute({ callId: `call-${++n}`, name: "ask_user_question", arguments: args, signal }),
  };
}

/** The harness of an agent of `hub`, asking through ask-user. */
export function hubHarness(hub, extra = {}) {
  return harness(askUser({ ...hub.agent, ...extra }));
}

/** What the published tool renders for `answers` from its own stand-in provider. */
export async function referenceText(args, answers) {
  const stand = await harness({ async ask() { return { answers }; } });
  const result = await stand.call(args);
  return result.content[0].text;
}
