// A real MCP client built on the official TypeScript SDK, driving the ask-user MCP server
// for the Rust tests (crates/mcp/tests/suite/typescript.rs). Prints one JSON object:
// {"sdk","protocol","tools","result","error","elicitations":[{id,params,valid,problems}],
//  "withdrawn","progress","web_status"}.
//
//   node mcp-client.mjs --sdk latest|1.17 (--url URL | --command BIN ARG...)
//        [--arguments JSON] [--reply R1|R2|...] [--cancel] [--timeout MS --progress]
//        [--web-url URL --delete]
//
// --sdk: `latest` is npm @modelcontextprotocol/sdk (protocol 2025-11-25), `1.17` the
//   aliased package sdk-1-17 (@modelcontextprotocol/sdk@1.17.5, protocol 2025-06-18).
// --reply, one per form in turn (the last repeats): `none` (declare no elicitation),
//   `decline`, `cancel`, `hold` (never answer), `accept:JSON` (raw content), `fill:JSON`
//   (a human filling the form: {"<id>": label | [labels] | text, "<id>.own": text}, mapped
//   onto whatever shapes the form has), `wait:MS:<reply>` (answer after MS), `throw`
//   (the handler fails, as a client that cannot show the form).
// Every elicitation/create is checked, raw as it arrived, against the SDK's own schema of
// its protocol version: the SDK's zod schema must accept it, and every key must be one that
// schema names (the SDK's schemas let unknown keys pass; the protocol does not define them).
// --cancel: abort the tool call once the first form arrived; `withdrawn` says whether the
//   handler's abort signal fired (the server cancelled its elicitation/create).
// --timeout MS --progress: the tools/call request times out after MS unless progress
//   notifications reset it (resetTimeoutOnProgress); `progress` counts them.
// --web-url URL --delete: once the question is pending on the web page, end the session
//   (HTTP DELETE), then post an answer to the page; `web_status` is the page's status.
// --check-only JSON: only check that elicitation/create message and print {"problems"}.
// --web-url URL --retry --timeout MS --answer-at MS [--retry-new-session]: the call times out
//   after MS with no progress reset (the SDK sends notifications/cancelled); the question
//   must still be pending on the page (`pending_after_timeout`); at --answer-at ms after the
//   call started, answers "No" on the page (`web_status`, `web_body`); then calls again with
//   the same arguments (on a new session, a new client of the same name, with
//   --retry-new-session; --retry-delay MS after the answer): `retry` is that result,
//   `retry_ms` how long it took. With --answer-after-retry MS instead of --answer-at, the
//   retry starts at once (re-attaching to the open ask) and the page is answered MS later.
// --timeout MS --retry-on-stdin: a human answers elsewhere (a browser the test drives): the
//   call times out after MS (no progress reset); the script prints the line `TIMED_OUT`,
//   waits for one line on stdin, then calls again with the same arguments on the same
//   session (`retry`, `retry_ms`); the JSON object is the last line.

import { setTimeout as sleep } from "node:timers/promises";

const argv = process.argv.slice(2);
const opts = { reply: "none", sdk: "latest" };
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--command") { opts.command = argv.slice(i + 1); break; }
  if (["--cancel", "--progress", "--delete", "--retry", "--retry-new-session", "--retry-on-stdin"].includes(a)) {
    opts[a.slice(2).replace(/-([a-z])/g, (_, c) => c.toUpperCase())] = true;
    continue;
  }
  opts[a.slice(2).replace(/-([a-z])/g, (_, c) => c.toUpperCase())] = argv[++i];
}

const pkg = opts.sdk === "1.17" ? "sdk-1-17" : "@modelcontextprotocol/sdk";
const { Client } = await import(`${pkg}/client/index.js`);
const { StdioClientTransport } = await import(`${pkg}/client/stdio.js`);
const { StreamableHTTPClientTransport } = await import(`${pkg}/client/streamableHttp.js`);
const types = await import(`${pkg}/types.js`);

const out = { sdk: opts.sdk, elicitations: [], withdrawn: false, progress: 0 };
const replies = opts.reply.split("|");
let formArrived;
const firstForm = new Promise((resolve) => { formArrived = resolve; });

// --- Strict check against the SDK's schema (zod 3 in 1.17, zod 4 in latest) ---------------
function kind(s) {
  const v4 = s?._zod?.def?.type;
  if (v4) return v4;
  const v3 = s?._def?.typeName;
  return v3 ? v3.replace(/^Zod/, "").toLowerCase() : "unknown";
}
function inner(s) {
  const d = s?._zod?.def ?? s?._def;
  return d.innerType ?? d.schema ?? d.in ?? (typeof d.getter === "function" ? d.getter() : undefined);
}
function shapeOf(s) { return typeof s.shape === "function" ? s.shape() : s.shape; }
function options(s) { return (s?._zod?.def ?? s?._def).options; }
// Problems with `value` under `schema`: keys the schema does not name, recursively.
function strict(schema, value, path) {
  const k = kind(schema);
  if (["optional", "nullable", "default", "lazy", "effects", "pipe", "readonly", "catch"].includes(k)) {
    return value === undefined ? [] : strict(inner(schema), value, path);
  }
  if (k === "object" && value && typeof value === "object" && !Array.isArray(value)) {
    const shape = shapeOf(schema);
    const problems = [];
    for (const key of Object.keys(value)) {
      if (!(key in shape)) problems.push(`${path}.${key}: not in this version's schema`);
      else problems.push(...strict(shape[key], value[key], `${path}.${key}`));
    }
    return problems;
  }
  if (k === "union") {
    let best;
    for (const option of options(schema)) {
      if (!option.safeParse(value).success) continue;
      const problems = strict(option, value, path);
      if (problems.length === 0) return [];
      if (!best || problems.length < best.length) best = problems;
    }
    return best ?? [`${path}: matches no member`];
  }
  if (k === "record" && value && typeof value === "object") {
    const d = schema?._zod?.def ?? schema?._def;
    const valueType = d.valueType;
    return Object.entries(value).flatMap(([key, v]) => strict(valueType, v, `${path}.${key}`));
  }
  if (k === "array" && Array.isArray(value)) {
    const d = schema?._zod?.def ?? schema?._def;
    const element = d.element ?? d.type;
    return value.flatMap((v, i) => strict(element, v, `${path}[${i}]`));
  }
  if (k === "intersection") {
    const d = schema?._zod?.def ?? schema?._def;
    return [...strict(d.left, value, path), ...strict(d.right, value, path)];
  }
  return [];
}
function check(raw) {
  const parsed = types.ElicitRequestSchema.safeParse(raw);
  const problems = parsed.success ? [] : [JSON.stringify(parsed.error.issues).slice(0, 500)];
  // The envelope's params (minus `_meta`, which every version allows with any keys).
  const params = { ...raw.params };
  delete params._meta;
  const paramsSchema = shapeOf(types.ElicitRequestSchema).params;
  problems.push(...strict(paramsSchema, params, "params"));
  return problems;
}

// --- The "human" filling a form -------------------------------------------------------
function fill(schema, wanted) {
  const content = {};
  for (const [key, prop] of Object.entries(schema.properties)) {
    if (key in wanted) {
      content[key] = wanted[key];
      continue;
    }
    // An option boolean `<id>.<n>` of a multi-select in a 2025-06-18 form.
    const m = /^(.*)\.(\d+)$/.exec(key);
    if (prop.type === "boolean" && m && Array.isArray(wanted[m[1]])) {
      content[key] = wanted[m[1]].includes(prop.title);
    }
  }
  return content;
}

async function answer(reply, request, extra) {
  if (reply.startsWith("wait:")) {
    const [, ms, ...rest] = reply.split(":");
    await sleep(Number(ms), undefined, { signal: extra.signal }).catch(() => {});
    return answer(rest.join(":"), request, extra);
  }
  if (reply === "hold") {
    await new Promise((resolve) => extra.signal.addEventListener("abort", resolve));
    return { action: "cancel" };
  }
  if (reply === "throw") throw new Error("this client cannot show that form");
  if (reply.startsWith("accept:")) return { action: "accept", content: JSON.parse(reply.slice(7)) };
  if (reply.startsWith("fill:")) {
    return { action: "accept", content: fill(request.params.requestedSchema, JSON.parse(reply.slice(5))) };
  }
  return { action: reply };
}

// --check-only JSON: print the problems of that elicitation/create message and exit.
if (opts.checkOnly) {
  console.log(JSON.stringify({ problems: check(JSON.parse(opts.checkOnly)) }));
  process.exit(0);
}

const elicit = replies[0] !== "none";
const client = new Client(
  { name: "ask-user-ts-test", version: "0" },
  { capabilities: elicit ? { elicitation: {} } : {} },
);
if (elicit) {
  client.setRequestHandler(types.ElicitRequestSchema, async (request, extra) => {
    const seen = out.elicitations[out.elicitations.length - 1];
    extra.signal.addEventListener("abort", () => { out.withdrawn = true; });
    formArrived();
    const reply = replies[Math.min(out.elicitations.length, replies.length) - 1];
    if (seen) seen.handled = true;
    return answer(reply, request, extra);
  });
}

const newTransport = () => opts.url
  ? new StreamableHTTPClientTransport(new URL(opts.url))
  : new StdioClientTransport({ command: opts.command[0], args: opts.command.slice(1), stderr: "inherit" });
const transport = newTransport();

// Record raw messages before the SDK parses (and, in zod 4, strips) them.
const started = transport.start.bind(transport);
transport.start = async () => {
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message.method === "elicitation/create") {
      const problems = check(message);
      out.elicitations.push({ id: message.id, params: message.params, valid: problems.length === 0, problems, handled: false });
    }
    if (message.result?.protocolVersion) out.protocol = message.result.protocolVersion;
    onmessage?.(message, extra);
  };
  return started();
};

await client.connect(transport);
const tools = await client.listTools();
out.tools = tools.tools.map((t) => t.name);

const started_at = Date.now();
const controller = new AbortController();
const callOptions = { signal: controller.signal };
if (opts.timeout) {
  callOptions.timeout = Number(opts.timeout);
  if (opts.progress) {
    callOptions.resetTimeoutOnProgress = true;
    callOptions.onprogress = () => { out.progress += 1; };
  }
}
const call = client.callTool(
  { name: "ask_user_question", arguments: JSON.parse(opts.arguments ?? "{}") },
  types.CallToolResultSchema,
  callOptions,
).then((result) => { out.result = result; }, (error) => { out.error = String(error?.message ?? error); });

if (opts.cancel) {
  await firstForm;
  controller.abort("the user moved on");
  await call;
  const deadline = Date.now() + 10_000;
  while (!out.withdrawn && Date.now() < deadline) await sleep(20);
  out.after_cancel_tools = (await client.listTools()).tools.length;
} else if (opts.webUrl && opts.delete) {
  const origin = new URL(opts.webUrl).origin;
  let batch;
  const deadline = Date.now() + 30_000;
  while (batch === undefined && Date.now() < deadline) {
    batch = await pendingBatch(opts.webUrl);
    if (batch === undefined) await sleep(50);
  }
  await transport.terminateSession();
  const response = await fetch(opts.webUrl + "answer", {
    method: "POST",
    headers: { "content-type": "application/json", origin },
    body: JSON.stringify({ batch, answers: [{ id: "go", selected: ["No"] }] }),
  });
  out.web_status = response.status;
  out.web_body = await response.text();
} else if (opts.retryOnStdin) {
  await call;
  out.first_ms = Date.now() - started_at;
  process.stdout.write("TIMED_OUT\n");
  const { createInterface } = await import("node:readline");
  const lines = createInterface({ input: process.stdin });
  await new Promise((resolve) => lines.once("line", resolve));
  lines.close();
  const retried_at = Date.now();
  try {
    out.retry = await client.callTool(
      { name: "ask_user_question", arguments: JSON.parse(opts.arguments ?? "{}") },
      types.CallToolResultSchema,
      { timeout: 120_000 },
    );
  } catch (error) {
    out.retry_error = String(error?.message ?? error);
  }
  out.retry_ms = Date.now() - retried_at;
} else if (opts.webUrl && opts.retry) {
  const origin = new URL(opts.webUrl).origin;
  await call;
  out.first_ms = Date.now() - started_at;
  const batch = await pendingBatch(opts.webUrl);
  out.pending_after_timeout = batch !== undefined;
  const answerOnPage = async () => {
    const response = await fetch(opts.webUrl + "answer", {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ batch, answers: [{ id: "go", selected: ["No"] }] }),
    });
    out.web_status = response.status;
    out.web_body = await response.text();
  };
  let answered = Promise.resolve();
  if (opts.answerAfterRetry) {
    // The retry re-attaches to the still open ask; the human answers MS after it started.
    answered = sleep(Number(opts.answerAfterRetry)).then(answerOnPage);
  } else {
    await sleep(Math.max(0, Number(opts.answerAt) - (Date.now() - started_at)));
    await answerOnPage();
  }
  await sleep(Number(opts.retryDelay ?? 0));
  let again = client;
  if (opts.retryNewSession) {
    await client.close().catch(() => {});
    again = new Client({ name: "ask-user-ts-test", version: "0" }, { capabilities: {} });
    await again.connect(newTransport());
  }
  const retried_at = Date.now();
  try {
    out.retry = await again.callTool(
      { name: "ask_user_question", arguments: JSON.parse(opts.arguments ?? "{}") },
      types.CallToolResultSchema,
      { timeout: 60_000 },
    );
  } catch (error) {
    out.retry_error = String(error?.message ?? error);
  }
  out.retry_ms = Date.now() - retried_at;
  await answered;
} else {
  await call;
}
console.log(JSON.stringify(out));
await client.close().catch(() => {});
process.exit(0);

// The id of the batch open on the page, if any (its live stream's first snapshot).
async function pendingBatch(url) {
  const response = await fetch(url + "events");
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (!text.includes("\n\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  const data = text.split("\n").find((l) => l.startsWith("data:"));
  const batches = data ? JSON.parse(data.slice(5)).batches ?? [] : [];
  return batches[0]?.batch;
}
