#!/usr/bin/env node
// The `ask-user` command of the npm package: finds the binary in this platform's package (an
// optional dependency, `@ask-user/<os>-<cpu>`, which npm installs only on its platform) and runs
// it with the same arguments, stdin, stdout and stderr, then exits with its status. Nothing is
// downloaded at install or run time.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

const { name, version, optionalDependencies = {} } = require("../package.json");
const platformPackage = `@ask-user/${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "ask-user.exe" : "ask-user";

function binaryPath() {
  if (!(platformPackage in optionalDependencies)) {
    throw new Error(
      `${name} ${version} has no binary for ${process.platform}-${process.arch} ` +
        `(it has: ${Object.keys(optionalDependencies).join(", ")})`,
    );
  }
  let manifest;
  try {
    manifest = require.resolve(`${platformPackage}/package.json`);
  } catch {
    throw new Error(
      `${platformPackage} is not installed beside ${name} ${version}; npm leaves optional ` +
        `dependencies out with --omit=optional: install ${name} again without it`,
    );
  }
  return path.join(path.dirname(manifest), "bin", exe);
}

let binary;
try {
  binary = binaryPath();
} catch (error) {
  process.stderr.write(`ask-user: ${error.message}\n`);
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit" });
// Ctrl-C reaches the binary from the terminal itself (same process group): this process only
// outlives it, so the exit status is the binary's. A signal sent to this process alone is passed on.
process.on("SIGINT", () => {});
for (const signal of ["SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
  process.stderr.write(`ask-user: cannot run ${binary}: ${error.message}\n`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
