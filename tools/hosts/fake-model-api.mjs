// FAKE model API for the end-to-end host tests (crates/hosts-e2e). Not a model: a script.
//
// Speaks just enough of three wire formats for an agent host to run one tool turn:
//   POST /v1/messages                          Anthropic Messages (SSE or JSON)   — Claude Code
//   POST /v1/responses                         OpenAI Responses (SSE)             — Codex
//   POST /v1beta/models/<m>:streamGenerateContent / :generateContent  Gemini      — Gemini CLI
//
// The script, for a request that offers a tool whose name ends in `ask_user_question`:
//   turn 1 (no result of that tool in the conversation yet): call it with the arguments in
//          $FAKE_TOOL_ARGS (a JSON object, as text);
//   later turns (the conversation holds its result): append one JSON line to $FAKE_RECORD,
//          {"api": "...", "result": <exactly what the host sent as the tool result>}; when
//          that result says the question is still open ("call ask_user_question again") and
//          fewer than $FAKE_RETRIES (default 0) retries were made, call the tool again with
//          the same arguments; else answer with the text "done".
// Every other request (titles, summaries, token counts, quota probes) gets the text "ok".
// With $FAKE_TOOL set, the tool called is the one of exactly that name instead (a host's own
// tool: Claude Code's `AskUserQuestion`, `ExitPlanMode`, `Bash`; Codex's `shell`), for the
// hook tests; the rest of the script is the same. $FAKE_STILL_OPEN replaces the words that
// mark a result as still open.
//
// Listens on 127.0.0.1:$FAKE_PORT (0: any) and prints `listening <port>` on stdout once
// ready. Every request is logged as one JSON line to $FAKE_LOG when set.
import http from "node:http";
import fs from "node:fs";

const TOOL_SUFFIX = "ask_user_question";
const args = JSON.parse(process.env.FAKE_TOOL_ARGS ?? "{}");
const record = process.env.FAKE_RECORD;
const logFile = process.env.FAKE_LOG;
const retries = Number(process.env.FAKE_RETRIES ?? 0);
// $FAKE_STILL_OPEN: the words of a "still open, ask again" result (the hook tests' differ).
const STILL_OPEN = process.env.FAKE_STILL_OPEN ?? "call ask_user_question again";
const exactTool = process.env.FAKE_TOOL;

// Whether `name` is the tool the script calls.
function isTool(name) {
  return exactTool ? name === exactTool : Boolean(name?.endsWith(TOOL_SUFFIX));
}

// Whether the model calls the tool (again), given the results of its calls so far.
function callsAgain(results) {
  if (results.length === 0) return true;
  return results.length <= retries && JSON.stringify(results.at(-1)).includes(STILL_OPEN);
}

function log(entry) {
  if (logFile) fs.appendFileSync(logFile, JSON.stringify(entry) + "\n");
}

function recordResult(api, result) {
  if (record) fs.appendFileSync(record, JSON.stringify({ api, result }) + "\n");
}

function sse(res, events) {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "close",
  });
  for (const [name, data] of events) {
    if (name) res.write(`event: ${name}\n`);
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  }
  res.end();
}

function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

// ---- Anthropic Messages -------------------------------------------------------------------

function anthropicTool(body) {
  return (body.tools ?? []).map((t) => t.name).find(isTool);
}

function anthropicResults(body) {
  const results = [];
  for (const message of body.messages ?? []) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content) {
      if (block.type === "tool_result" && String(block.tool_use_id).startsWith("toolu_fake")) {
        results.push(block);
      }
    }
  }
  return results;
}

function anthropic(body, res) {
  const tool = anthropicTool(body);
  const results = anthropicResults(body);
  if (tool && results.length > 0) recordResult("anthropic", results.at(-1));
  let content;
  let stop = "end_turn";
  if (tool && callsAgain(results)) {
    const id = `toolu_fake_${results.length + 1}`;
    content = { type: "tool_use", id, name: tool, input: args };
    stop = "tool_use";
  } else {
    content = { type: "text", text: tool ? "done" : "ok" };
  }
  const usage = { input_tokens: 10, output_tokens: 5 };
  const message = {
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model: body.model ?? "fake",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage,
  };
  if (!body.stream) {
    return json(res, 200, { ...message, content: [content], stop_reason: stop });
  }
  const start =
    content.type === "tool_use" ? { ...content, input: {} } : { type: "text", text: "" };
  const delta =
    content.type === "tool_use"
      ? { type: "input_json_delta", partial_json: JSON.stringify(args) }
      : { type: "text_delta", text: content.text };
  sse(res, [
    ["message_start", { type: "message_start", message }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: start }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    [
      "message_delta",
      { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage },
    ],
    ["message_stop", { type: "message_stop" }],
  ]);
}

// ---- OpenAI Responses ---------------------------------------------------------------------

function responses(body, res) {
  // Codex offers MCP tools inside a `namespace` tool ({type, name, tools: [...]}); the call
  // then names the namespace beside the function.
  let tool;
  let namespace;
  for (const t of body.tools ?? []) {
    if (t.type === "namespace") {
      const inner = (t.tools ?? []).find((i) => isTool(i.name));
      if (inner) [tool, namespace] = [inner.name, t.name];
    } else if (isTool(t.name ?? t.function?.name)) {
      tool = t.name ?? t.function?.name;
    }
  }
  const results = (Array.isArray(body.input) ? body.input : []).filter(
    (item) => item.type === "function_call_output" && item.call_id?.startsWith("call_fake_"),
  );
  if (tool && results.length > 0) recordResult("responses", results.at(-1));
  const id = "resp_fake";
  const n = results.length + 1;
  let item;
  if (tool && callsAgain(results)) {
    item = {
      type: "function_call",
      id: `fc_fake_${n}`,
      call_id: `call_fake_${n}`,
      name: tool,
      ...(namespace ? { namespace } : {}),
      arguments: JSON.stringify(args),
      status: "completed",
    };
  } else {
    item = {
      type: "message",
      id: "msg_fake",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: tool ? "done" : "ok", annotations: [] }],
    };
  }
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  sse(res, [
    ["response.created", { type: "response.created", response: { id, status: "in_progress" } }],
    ["response.output_item.added", { type: "response.output_item.added", output_index: 0, item }],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    [
      "response.completed",
      {
        type: "response.completed",
        response: { id, status: "completed", output: [item], usage },
      },
    ],
  ]);
}

// ---- Gemini -------------------------------------------------------------------------------

function gemini(body, res, stream) {
  const tool = (body.tools ?? [])
    .flatMap((t) => t.functionDeclarations ?? t.function_declarations ?? [])
    .map((d) => d.name)
    .find(isTool);
  const results = [];
  for (const content of body.contents ?? []) {
    for (const part of content.parts ?? []) {
      if (part.functionResponse && part.functionResponse.name === tool) results.push(part);
    }
  }
  if (tool && results.length > 0) recordResult("gemini", results.at(-1));
  const part =
    tool && callsAgain(results)
      ? { functionCall: { name: tool, args } }
      : { text: tool ? "done" : "ok" };
  const chunk = {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: "fake",
  };
  if (stream) return sse(res, [[null, chunk]]);
  json(res, 200, chunk);
}

// ---- server -------------------------------------------------------------------------------

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const text = Buffer.concat(chunks).toString("utf8");
    let body = {};
    try {
      body = text ? JSON.parse(text) : {};
    } catch {
      body = {};
    }
    const path = (req.url ?? "").split("?")[0];
    log({ method: req.method, path, body });
    if (req.method !== "POST") {
      if (path.endsWith("/models")) return json(res, 200, { data: [], models: [] });
      return json(res, 404, { error: { message: "fake model API: no such route" } });
    }
    if (path.endsWith("/messages/count_tokens")) return json(res, 200, { input_tokens: 10 });
    if (path.endsWith("/messages")) return anthropic(body, res);
    if (path.endsWith("/responses")) return responses(body, res);
    if (path.includes(":streamGenerateContent")) return gemini(body, res, true);
    if (path.includes(":generateContent")) return gemini(body, res, false);
    if (path.includes(":countTokens")) return json(res, 200, { totalTokens: 10 });
    json(res, 404, { error: { message: "fake model API: no such route" } });
  });
});

server.listen(Number(process.env.FAKE_PORT ?? 0), "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
