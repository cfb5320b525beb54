// Differential oracle over the published reference (@deepseek-ai/dsh-tool-ask-user with its
// validator from @deepseek-ai/dsh-tools), for crates/core/tests/suite/differential.rs.
//
// One JSON line in per case: {"args": <the model's arguments>, "answers": <an answer value>}.
// One JSON line out per case, in the same order:
//   {"violations": [...],   // the reference validator's verdict on args ([] = accepted)
//    "render": "...",       // definition.output.render(args, answers)[0].text
//    "call": "..." | null}  // the whole reference call (validate, execute with a provider that
//                           // returns `answers`, render), null when validation refused args
// A line that is not JSON gets {"error": "..."}; the script never stops early, so one node
// process serves a whole batch.
import { createInterface } from "node:readline";
import { validateJsonSchemaValue } from "@deepseek-ai/dsh-tools";
import * as tool from "@deepseek-ai/dsh-tool-ask-user";

let definition;
let next;
const provider = { async ask() { return next; } };
tool.apply({ tools: { register(d) { definition = d; return () => {}; } }, userQuestions: provider });

const out = [];
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (!line.trim()) continue;
  let input;
  try { input = JSON.parse(line); } catch (e) { out.push(JSON.stringify({ error: String(e) })); continue; }
  const { args, answers } = input;
  const violations = validateJsonSchemaValue(definition.parameters, args, "");
  const render = definition.output.render(args, answers)[0].text;
  let call = null;
  if (violations.length === 0) {
    next = answers;
    const value = await definition.execute(args, { signal: new AbortController().signal });
    call = definition.output.render(args, value)[0].text;
  }
  out.push(JSON.stringify({ violations, render, call }));
}
process.stdout.write(out.length ? out.join("\n") + "\n" : "");
