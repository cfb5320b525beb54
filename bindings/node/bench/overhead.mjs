// What one ask costs the harness beyond the human: the published tool in the published runtime
// with askUser() (one `ask-user ask` process per ask; `via: ["none"]`, so it ends at once with
// the no-answerer outcome after decoding, validating and checking the store) against the same
// tool with the reference's in-process stand-in provider. Prints per-call times and their ratio,
// measured in the same run. Run by hand after `npm ci` and `npx tsc` here:
//
//   ASK_USER_BIN=../../target/release/ask-user node bench/overhead.mjs [calls]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { askUser } from "../lib/index.js";
import { harness } from "../test/support.mjs";

const n = Number(process.argv[2] ?? 200);
const args = { questions: [
  { id: "db", header: "Database", question: "Which database should the service use?", options: [
    { label: "PostgreSQL (Recommended)", description: "Relational, already run by the team." },
    { label: "SQLite", description: "Embedded, no server to operate." } ] },
  { id: "name", question: "What should the service be called?" },
] };
const dir = mkdtempSync(join(tmpdir(), "ask-user-ts-bench-"));
const stand = await harness({ async ask(r) { return { answers: r.questions.map((q) => ({ id: q.id, selected: [] })) }; } });
const ours = await harness(askUser({ via: ["none"], store: "memory", binary: process.env.ASK_USER_BIN, env: { PATH: process.env.PATH ?? "" }, cwd: dir }));

async function perCall(h, calls) {
  for (let i = 0; i < Math.min(20, calls); i++) await h.call(args);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await h.call(args);
  return Number(process.hrtime.bigint() - t0) / calls;
}
const reference = await perCall(stand, n * 20);
const provider = await perCall(ours, n);
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({
  calls: n,
  stand_in_us_per_call: Math.round(reference / 1000),
  ask_user_process_us_per_call: Math.round(provider / 1000),
  ratio: Math.round(provider / reference),
}));
