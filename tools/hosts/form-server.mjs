// FAKE MCP server for the hook tests (crates/cli/tests/slow/hooks.rs). Not a product: a script.
//
// Speaks MCP over stdio (one JSON-RPC message a line) with one tool, `deploy`: a call sends
// the client an `elicitation/create` form ($FORM_MESSAGE and the JSON schema in $FORM_SCHEMA)
// and answers the call with the text `form: <the client's reply as JSON>`, so the model reads
// exactly what the client answered for the form.
import readline from "node:readline";

const message = process.env.FORM_MESSAGE ?? "The deployer needs a few details.";
const schema = JSON.parse(process.env.FORM_SCHEMA ?? '{"type":"object","properties":{}}');
let nextId = 1;
const waiting = new Map();

function send(msg) {
  process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...msg }) + "\n");
}

function handle(msg) {
  if (msg.id !== undefined && !msg.method) {
    const resolve = waiting.get(msg.id);
    waiting.delete(msg.id);
    if (resolve) resolve(msg.error ? { error: msg.error } : msg.result);
    return;
  }
  switch (msg.method) {
    case "initialize":
      return send({
        id: msg.id,
        result: {
          protocolVersion: msg.params?.protocolVersion ?? "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "deployer", version: "0.0.0" },
        },
      });
    case "tools/list":
      return send({
        id: msg.id,
        result: {
          tools: [
            {
              name: "deploy",
              description: "Deploys the service; asks for the details in a form.",
              inputSchema: { type: "object", properties: {} },
            },
          ],
        },
      });
    case "tools/call": {
      const id = `form-${nextId++}`;
      waiting.set(id, (reply) =>
        send({
          id: msg.id,
          result: { content: [{ type: "text", text: `form: ${JSON.stringify(reply)}` }] },
        }),
      );
      return send({
        id,
        method: "elicitation/create",
        params: { mode: "form", message, requestedSchema: schema },
      });
    }
    default:
      if (msg.id !== undefined) {
        send({ id: msg.id, error: { code: -32601, message: `no method ${msg.method}` } });
      }
  }
}

readline.createInterface({ input: process.stdin }).on("line", (line) => {
  if (!line.trim()) return;
  try {
    handle(JSON.parse(line));
  } catch (e) {
    process.stderr.write(`form-server: ${e}\n`);
  }
});
