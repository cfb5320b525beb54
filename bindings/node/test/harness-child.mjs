// A harness process for the kill -9 test: one ask_user_question call ($TEST_ARGS) through the
// published tool and runtime, askUser($TEST_OPTIONS) as its provider (a hub token comes in
// $TEST_HUB_TOKEN: the environment, never argv); prints the model-facing text, no newline.
import { askUser } from "../lib/index.js";
import { cleanEnv, harness } from "./support.mjs";

const options = JSON.parse(process.env.TEST_OPTIONS);
const token = process.env.TEST_HUB_TOKEN;
const agent = await harness(askUser({
  ...options, ...(token ? { token } : {}), binary: process.env.ASK_USER_BIN, env: cleanEnv(process.env.HOME),
}));
const result = await agent.call(JSON.parse(process.env.TEST_ARGS));
process.stdout.write(result.content[0].text);
