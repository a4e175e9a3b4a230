#!/usr/bin/env node
// `npm start [-- <dir>] [pi args…]`: runs the project's real pi with this checkout's pi-cgc loaded, in the
// directory npm was started from (npm itself runs scripts from the package root, hence INIT_CWD) or in <dir>.
// The project's own cgc (.venv, installed by scripts/setup.mjs) is used unless the user chose one, through
// the environment or a pi-cgc config file; the env var would otherwise override the file.

import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PI_CLI = join(ROOT, "node_modules", "@mariozechner", "pi-coding-agent", "dist", "cli.js");
const PROJECT_CGC = join(ROOT, ".venv", "bin", "cgc");

function configuredExecutable(file) {
  if (!existsSync(file)) return undefined;
  try {
    const config = JSON.parse(readFileSync(file, "utf8"));
    return config?.cgc?.executable ?? config?.["cgc.executable"];
  } catch (error) {
    console.error(`[start] ignoring unreadable ${file}: ${error.message}`);
    return undefined;
  }
}

function agentDir() {
  const dir = process.env.PI_CODING_AGENT_DIR;
  if (!dir) return join(homedir(), ".pi", "agent");
  return dir === "~" || dir.startsWith("~/") ? join(homedir(), dir.slice(1)) : resolve(dir);
}

const invokedFrom = process.env.INIT_CWD ?? process.cwd();
const args = process.argv.slice(2);
const target = args[0] !== undefined && !args[0].startsWith("-") ? resolve(invokedFrom, args.shift()) : invokedFrom;
if (!existsSync(target) || !statSync(target).isDirectory()) {
  console.error(`[start] not a directory: ${target}`);
  process.exit(2);
}

const env = { ...process.env };
const userChoseCgc =
  env.CGC_EXECUTABLE ||
  configuredExecutable(join(agentDir(), "cgc.json")) ||
  configuredExecutable(join(target, ".pi", "cgc.json"));
if (!userChoseCgc) env.CGC_EXECUTABLE = PROJECT_CGC;

// The package folder: pi loads what its manifest names (extensions/pi-cgc/, which setup built from src/).
const child = spawn(process.execPath, [PI_CLI, "-e", ROOT, ...args], { cwd: target, env, stdio: "inherit" });

const forwarded = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"];
const forward = (signal) => child.kill(signal);
for (const signal of forwarded) process.on(signal, forward);

child.on("error", (error) => {
  console.error(`[start] could not run pi: ${error.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  for (const s of forwarded) process.off(s, forward);
  if (signal) process.kill(process.pid, signal);
  else process.exit(code ?? 1);
});
