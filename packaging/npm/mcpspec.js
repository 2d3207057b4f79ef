#!/usr/bin/env node
// The `mcpspec` command of the npm package: runs the prebuilt binary of the platform
// package npm installed for this os/cpu (an optional dependency, e.g. @mcpspec/linux-x64),
// with the same arguments, standard streams and exit code. No download, no install script.
"use strict";

const { spawn } = require("child_process");
const path = require("path");

const pkg = `@mcpspec/${process.platform}-${process.arch}`;
const exe = process.platform === "win32" ? "mcpspec.exe" : "mcpspec";

let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin", exe);
} catch {
  // The repository's address, as packaging/package.py wrote it (from Cargo.toml).
  const home = require("../package.json").homepage;
  console.error(
    `mcpspec: no prebuilt binary for ${process.platform}-${process.arch}: the optional ` +
      `dependency ${pkg} is not installed. Reinstall without --omit=optional / ` +
      `--no-optional. Released platforms: linux-x64, linux-arm64, darwin-x64, ` +
      `darwin-arm64, win32-x64 (the archives: ${home}/releases); elsewhere, build it ` +
      `from source (${home}).`
  );
  process.exit(4);
}

const child = spawn(binary, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
child.on("error", (err) => {
  console.error(`mcpspec: cannot run ${binary}: ${err.message}`);
  process.exit(4);
});
// SIGTERM/SIGHUP sent to this launcher alone reach mcpspec (which then stops its servers
// and writes its reports). Ctrl-C needs no relay: the terminal sends SIGINT to the whole
// foreground group, and a second SIGINT would tell mcpspec to exit at once.
for (const sig of ["SIGTERM", "SIGHUP"]) {
  process.on(sig, () => child.kill(sig));
}
process.on("SIGINT", () => {});
child.on("exit", (code, signal) => {
  if (signal) {
    // Die of the same signal, so the caller sees what mcpspec saw.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code);
  }
});
