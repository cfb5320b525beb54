// The published shape of the package: `npm pack` makes a tarball that installs (offline, from
// the npm cache scripts/setup filled) into a fresh project beside the harness's own package, whose
// declarations type-check a consumer with `tsc --noEmit`, and whose code runs from there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BIN } from "./support.mjs";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const pkg = JSON.parse(execFileSync("node", ["-p", "JSON.stringify(require('./package.json'))"], { cwd: here, encoding: "utf8" }));
const tsc = join(here, "node_modules/typescript/bin/tsc");

const CONSUMER = `import type { UserQuestionProvider } from "@deepseek-ai/dsh-user-questions";
import { askUser, EXIT_CODES, toArguments, type AskUserOptions } from "@ask-user/deepseek-harness";
const options: AskUserOptions = {
  via: ["hub", "web"], hub: ["https://a.example", "https://b.example"], token: "auh_x", timeout: "5m",
  key: (request) => request.questions[0]?.id,
};
export const provider: UserQuestionProvider = askUser(options);
export const code: string | undefined = EXIT_CODES[4];
export const args: { questions: unknown[] } = toArguments({ questions: [{ id: "a", question: "Q?" }] });
// @ts-expect-error via is a list of answerer names
askUser({ via: "hub" });
// @ts-expect-error a key is text or a function of the request
askUser({ key: 7 });
`;

test("npm pack makes a package that installs, type-checks a consumer and runs", () => {
  const dir = mkdtempSync(join(tmpdir(), "ask-user-ts-pack-"));
  try {
    const npm = (args, cwd) => execFileSync("npm", [...args, "--offline", "--no-audit", "--no-fund", "--loglevel=error"], { cwd, encoding: "utf8", env: { ...process.env, NPM_CONFIG_UPDATE_NOTIFIER: "false" } });
    // lib/ is built (tsc) by the runner before the tests; prepack would build it again.
    npm(["pack", "--ignore-scripts", "--pack-destination", dir], here);
    const tarballs = readdirSync(dir).filter((f) => f.endsWith(".tgz"));
    assert.deepEqual(tarballs, [`ask-user-deepseek-harness-${pkg.version}.tgz`]);
    const listing = execFileSync("tar", ["tzf", join(dir, tarballs[0])], { encoding: "utf8" }).split("\n").filter(Boolean).sort();
    assert.deepEqual(listing, ["package/LICENSE", "package/README.md", "package/lib/index.d.ts", "package/lib/index.js", "package/package.json"]);

    const app = join(dir, "app");
    execFileSync("mkdir", [app]);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    const peers = ["@deepseek-ai/dsh-user-questions"].map((name) => `${name}@${pkg.devDependencies[name]}`);
    npm(["install", join(dir, tarballs[0]), ...peers], app);
    // The rest of the harness the README's forms import, as installed here for these tests
    // (the offline npm cache holds their tarballs, not their registry metadata): linked in.
    for (const name of ["@deepseek-ai/cordis", "@deepseek-ai/dsh-tool-ask-user", "@deepseek-ai/dsh-tools", "@types/node"]) {
      if (existsSync(join(app, "node_modules", name))) continue;
      mkdirSync(dirname(join(app, "node_modules", name)), { recursive: true });
      symlinkSync(join(here, "node_modules", name), join(app, "node_modules", name));
    }

    writeFileSync(join(app, "consumer.ts"), CONSUMER);
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify({
      // skipLibCheck off: the package's declarations (and the harness's they name) are checked;
      // without @types/node, so they are shown to need nothing of Node's.
      compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: false, lib: ["ESNext", "DOM"], types: [] },
      files: ["consumer.ts"],
    }));
    try {
      execFileSync("node", [tsc, "-p", "tsconfig.json"], { cwd: app, encoding: "utf8" });
    } catch (e) {
      assert.fail(`tsc --noEmit of the consumer: ${e.stdout}`);
    }

    // The README's two forms, as written there, each in a module of its own; only what the
    // README says the harness already holds is declared (its `ctx`, its `tools`).
    const blocks = [...readFileSync(join(here, "README.md"), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
    assert.equal(blocks.length, 2, "the README shows two TypeScript forms");
    const held = [
      `declare const ctx: import("@deepseek-ai/cordis").Context;\n`,
      `declare const tools: import("@deepseek-ai/dsh-tools").ToolRuntime;\n`,
    ];
    blocks.forEach((block, i) => writeFileSync(join(app, `readme-${i}.ts`), `${held[i]}${block}export {};\n`));
    writeFileSync(join(app, "tsconfig.readme.json"), JSON.stringify({
      compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: false, lib: ["ES2022"], types: ["node"] },
      files: blocks.map((_, i) => `readme-${i}.ts`),
    }));
    try {
      execFileSync("node", [tsc, "-p", "tsconfig.readme.json"], { cwd: app, encoding: "utf8" });
    } catch (e) {
      assert.fail(`tsc --noEmit of the README's forms: ${e.stdout}`);
    }

    const script = `import { askUser } from "@ask-user/deepseek-harness";
      askUser({ via: ["none"], binary: process.env.ASK_USER_BIN, store: "memory", env: { PATH: process.env.PATH } })
        .ask({ questions: [{ id: "go", question: "Go?" }] })
        .then(() => process.exit(1), (e) => { process.stdout.write(e.name + " " + e.code); });`;
    const out = execFileSync("node", ["--input-type=module", "-e", script], { cwd: app, encoding: "utf8", env: { PATH: process.env.PATH, ASK_USER_BIN: BIN } });
    assert.equal(out, "UserQuestionError NO_PROVIDER");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
