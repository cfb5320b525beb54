/**
 * ask-user as the `userQuestions` provider of DeepSeek's TypeScript harness.
 *
 * ```ts
 * import { UserQuestionService } from "@deepseek-ai/dsh-user-questions";
 * import * as askUserTool from "@deepseek-ai/dsh-tool-ask-user";
 * import { askUser } from "@ask-user/deepseek-harness";
 *
 * await ctx.plugin(UserQuestionService).await();
 * await ctx.plugin(askUserTool).await();
 * ctx.userQuestions.registerProvider(askUser({ via: ["hub"], hub: "http://127.0.0.1:8765", token }));
 * ```
 *
 * The provider is a plain `{ ask }`, so `askUserTool.apply({ tools, userQuestions: askUser(…) })`
 * works as well.
 *
 * Each `ask()` runs one `ask-user ask -` process with the request on stdin, so every answerer
 * (terminal, web page, hub inbox, phone channels), the store and the hub's rules apply
 * unchanged. An abort of the request's `signal` detaches the ask (it stays open for the human);
 * a retry with the same `key` re-attaches to it, or gets the answer given meanwhile.
 *
 * @module @ask-user/deepseek-harness
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  UserQuestionError,
  type AskUserQuestionAnswer,
  type AskUserQuestionItem,
  type AskUserQuestionRequest,
  type UserQuestionProvider,
} from "@deepseek-ai/dsh-user-questions";

/**
 * The binary of the npm package `ask-user` (`npm install ask-user` beside this package): the
 * file `bin/ask-user` of its package for this platform, `@ask-user/<platform>-<arch>`, resolved
 * as Node resolves modules from `from` (default: this module). `undefined` when either package
 * is not installed there.
 */
export function packagedBinary(from: string = import.meta.url): string | undefined {
  try {
    const launcher = createRequire(from).resolve("ask-user/package.json");
    const platform = createRequire(launcher).resolve(`@ask-user/${process.platform}-${process.arch}/package.json`);
    return join(dirname(platform), "bin", process.platform === "win32" ? "ask-user.exe" : "ask-user");
  } catch {
    return undefined;
  }
}

/** Options of {@link askUser}. Every field is optional. */
export interface AskUserOptions {
  /**
   * Who asks, first answer wins: `terminal`, `web`, `inbox`, `hub`, `none` (see
   * `ask-user ask --help`). Default: the hub alone when `hub` is set, else the terminal.
   */
  via?: readonly string[];
  /** The hub's URL, or several replicas of one inbox. */
  hub?: string | readonly string[];
  /** The agent's hub token (`ask-user hub token add NAME`). Passed in the environment, never in argv. */
  token?: string;
  /**
   * The `ask-user` binary. Default: `$ASK_USER_BIN`, else the npm package `ask-user`'s binary
   * when it is installed beside this package ({@link packagedBinary}), else `ask-user` on `PATH`.
   */
  binary?: string;
  /** Where asks are kept (`sqlite:PATH`, `postgres://…`, `memory`); default: ask-user's own. */
  store?: string;
  /** A budget such as `"5m"`; when it runs out the model reads the timed-out text. Default: none. */
  timeout?: string;
  /**
   * The call key: the same key with the same questions re-attaches to its ask (an abort's retry
   * gets the answer given meanwhile), also while another call of that key waits — the same key
   * is the same call. A function gets the request; when it is absent or returns nothing, the
   * harness's tool-call id is used when the request carries one (`callId`, `wait.callId`; the
   * published tool passes none). With neither, each `ask()` is a call of its own: an abort
   * detaches its ask, and the retry asks anew.
   */
  key?: string | ((request: AskUserQuestionRequest) => string | undefined);
  /** The session identity ask-user scopes asks by (`ASK_USER_SESSION`). */
  session?: string;
  /** The session title shown to the human beside the question. */
  sessionTitle?: string;
  /** The environment of the `ask-user` process. Default: this process's environment. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Working directory of the `ask-user` process (part of its default scope). */
  cwd?: string;
  /**
   * Gets the process's stderr (its notes and warnings, e.g. "no inbox is open"), as it comes.
   * Default: kept only to name the reason of a failure; never shown to the model.
   */
  onStderr?: (text: string) => void;
}

/** The stable codes a {@link UserQuestionError} from this provider carries, by `ask-user ask` exit status. */
export const EXIT_CODES: Readonly<Record<number, string>> = Object.freeze({
  1: "ANSWER_FAILED",
  3: "INVALID_ARGS",
  4: "ASK_CANCELLED",
  5: "ASK_TIMED_OUT",
  6: "NO_PROVIDER",
  7: "DELEGATED_CALLER",
  8: "STORE_GONE",
  130: "ASK_ABORTED",
});

/**
 * A misconfiguration of the provider — an unknown `via` name, flags or a token file ask-user
 * refuses, a hub that cannot be reached or refuses the token — thrown for the developer with
 * its cause. Never a {@link UserQuestionError}: the model is not told "ask in plain text" for a
 * setup the developer has to fix.
 */
export class AskUserSetupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "AskUserSetupError";
  }
}

/** The answerers `--via` knows (`ask-user ask --help`). */
export const VIA_NAMES: readonly string[] = Object.freeze(["terminal", "web", "inbox", "hub", "none"]);

/** The harness's text for an abort, also what `ask-user ask` prints on one. */
const ABORTED = "ask_user_question was aborted before the user answered";

/** The arguments `ask-user ask` reads for one harness request (the model-facing shape). */
export function toArguments(request: AskUserQuestionRequest): { questions: unknown[] } {
  return { questions: request.questions.map(toQuestion) };
}

/**
 * One harness question in ask-user's shape. `detail` (say, a plan under review) follows the
 * question after a blank line; a `plan-review` intent heads the card "Plan review" unless it has a
 * header, and describes its approve option as approving the plan and each other one as keeping
 * on planning, when they carry no description of their own. Labels are never changed: the
 * answer names the same labels the harness offered.
 */
function toQuestion(item: AskUserQuestionItem): Record<string, unknown> {
  const review = item.intent?.kind === "plan-review" ? item.intent : undefined;
  const question = item.detail !== undefined && item.detail.trim() !== ""
    ? `${item.question}\n\n${item.detail}`
    : item.question;
  const header = item.header ?? (review !== undefined ? "Plan review" : undefined);
  const options = item.options?.map((option) => {
    const description = option.description
      ?? (review === undefined
        ? undefined
        : option.label === review.approve ? "Approve the plan and start." : "Keep planning.");
    return description === undefined ? { label: option.label } : { label: option.label, description };
  });
  return {
    id: item.id,
    question,
    ...(header !== undefined ? { header } : {}),
    ...(options !== undefined ? { options } : {}),
    ...(item.multiSelect !== undefined ? { multi_select: item.multiSelect } : {}),
  };
}

/**
 * The harness's own tool-call id, when the request carries one (`callId`, or `wait.callId`).
 * The published tool (`@deepseek-ai/dsh-tool-ask-user` 0.0.1-rc.1 and 0.1.0-rc.8) passes
 * none: its requests hold the questions, the calling agent and the signal only.
 */
function callIdOf(request: AskUserQuestionRequest): string | undefined {
  const loose = request as { callId?: unknown; wait?: { callId?: unknown } };
  const id = loose.callId ?? loose.wait?.callId;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/** `argv` (without the binary) and environment of one ask. Secrets go in the environment only. */
export function command(
  options: AskUserOptions,
  request: AskUserQuestionRequest,
): { args: string[]; env: Record<string, string> } {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env ?? process.env)) {
    if (value !== undefined) env[name] = value;
  }
  const args = ["ask"];
  if (options.via !== undefined && options.via.length > 0) args.push("--via", options.via.join(","));
  if (options.hub !== undefined) {
    args.push("--hub", typeof options.hub === "string" ? options.hub : options.hub.join(","));
  }
  if (options.token !== undefined) env.ASK_USER_HUB_TOKEN = options.token;
  if (options.store !== undefined) args.push("--store", options.store);
  if (options.timeout !== undefined) args.push("--timeout", options.timeout);
  if (options.session !== undefined) env.ASK_USER_SESSION = options.session;
  if (options.sessionTitle !== undefined) args.push("--session-title", options.sessionTitle);
  // Identity is given, never read from the questions: the developer's key, else the harness's
  // tool-call id; with neither, ask-user's own scope.
  const key = (typeof options.key === "function" ? options.key(request) : options.key)
    ?? callIdOf(request);
  if (key !== undefined) env.ASK_USER_CALL_ID = key;
  args.push("-");
  return { args, env };
}

/** What one `ask-user ask` process ended with. */
interface Ended {
  status: number | null;
  stdout: string;
  stderr: string;
  spawnError?: Error;
}

/** The line of stderr saying no hub was reachable or a hub refused the token, if any. */
function hubSetupProblem(stderr: string): string | undefined {
  return stderr
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.includes("no hub reachable (") || /refused the ask: unauthorized/.test(l));
}

/** The last line of stderr worth naming in a failure, without the program prefix. */
function lastLine(stderr: string): string {
  const lines = stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  return (lines[lines.length - 1] ?? "").replace(/^ask-user: /, "");
}

/**
 * A `userQuestions` provider backed by ask-user. Register it with
 * `ctx.userQuestions.registerProvider(askUser(…))`, or hand it to the tool as `userQuestions`.
 *
 * `ask()` resolves with ask-user's answer (`{answers: [{id, selected, custom?}]}`, one item per
 * question in request order, a skip as `selected: []`). Every other outcome rejects with a
 * {@link UserQuestionError} whose `message` is ask-user's model-facing text without its
 * `Error: ` prefix (so the tool renders exactly `Error: …` as `ask-user ask` printed it) and whose
 * `code` is the outcome's ({@link EXIT_CODES}). An abort sends SIGTERM to the process, which
 * detaches the ask, and rejects with `ASK_ABORTED` — unless the human's answer won the race and
 * ask-user printed it, in which case that answer is the result.
 */
export function askUser(options: AskUserOptions = {}): UserQuestionProvider {
  for (const name of options.via ?? []) {
    if (!VIA_NAMES.includes(name.trim())) {
      throw new AskUserSetupError(`askUser: unknown via ${JSON.stringify(name)}; use one or more of: ${VIA_NAMES.join(", ")}`);
    }
  }
  const frozen: AskUserOptions = { ...options };
  return {
    ask: (request) => ask(frozen, request),
  };
}

async function ask(options: AskUserOptions, request: AskUserQuestionRequest): Promise<AskUserQuestionAnswer> {
  const signal = request.signal;
  if (signal?.aborted) throw new UserQuestionError(ABORTED, "ASK_ABORTED");
  const { args, env } = command(options, request);
  const binary = options.binary ?? env.ASK_USER_BIN ?? packagedBinary() ?? "ask-user";
  const input = JSON.stringify(toArguments(request));
  let aborted = false;
  const ended = await new Promise<Ended>((resolve) => {
    const child = spawn(binary, args, {
      env,
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let spawnError: Error | undefined;
    const onAbort = () => {
      aborted = true;
      child.kill("SIGTERM");
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => {
      err.push(chunk);
      options.onStderr?.(chunk.toString("utf8"));
    });
    child.stdin.on("error", () => {});
    child.on("error", (error) => {
      spawnError = error;
    });
    child.on("close", (status) => {
      signal?.removeEventListener("abort", onAbort);
      resolve({
        status,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        ...(spawnError !== undefined ? { spawnError } : {}),
      });
    });
    child.stdin.end(input);
  });
  // An abort that lost the store's race to the human's answer (or dismissal) yields that
  // outcome, which ask-user has printed: the store decided it, so it is not dropped here.
  if (aborted && (ended.status === null || ended.status === 130)) {
    throw new UserQuestionError(ABORTED, "ASK_ABORTED");
  }
  if (ended.spawnError !== undefined) {
    throw new UserQuestionError(
      `no way to ask the user is available (ask-user did not start: ${ended.spawnError.message}); ask your question in plain text in your reply instead.`,
      "NO_PROVIDER",
      { cause: ended.spawnError },
    );
  }
  const text = ended.stdout.replace(/\n$/, "");
  if (ended.status === 0) {
    try {
      return JSON.parse(text) as AskUserQuestionAnswer;
    } catch (cause) {
      throw new UserQuestionError("ask-user printed an answer that is not JSON", "ANSWER_FAILED", { cause });
    }
  }
  const why = lastLine(ended.stderr);
  // ask-user refused its flags or token file (a usage error), or no hub would take the ask:
  // the developer's to fix, with ask-user's own words as the cause.
  if (ended.status === 2) {
    const said = ended.stderr.split("\n").map((l) => l.trim()).find((l) => l.startsWith("error:")) ?? why;
    throw new AskUserSetupError(`ask-user refused this provider's configuration: ${said.replace(/^error: /, "")}`, { cause: new Error(ended.stderr.trim()) });
  }
  const hubProblem = hubSetupProblem(ended.stderr);
  if (ended.status === 6 && hubProblem !== undefined) {
    throw new AskUserSetupError(`ask-user could not ask through the hub: ${hubProblem}`, { cause: new Error(ended.stderr.trim()) });
  }
  const code = ended.status === null ? undefined : EXIT_CODES[ended.status];
  if (code !== undefined && text.startsWith("Error: ")) {
    throw new UserQuestionError(text.slice("Error: ".length), code);
  }
  throw new UserQuestionError(
    `ask-user failed (${ended.status === null ? "killed by a signal" : `exit ${ended.status}`})${why !== "" ? `: ${why}` : ""}`,
    "ANSWER_FAILED",
  );
}
