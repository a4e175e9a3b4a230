import {
  cgcDotEnvPath,
  readCgcDotEnv
} from "./chunk-K7T5KA4E.js";
import {
  parseDatabaseBanner,
  parseDoctorDefaultDatabase
} from "./chunk-AN223M6Q.js";

// src/cgc/backend.ts
import { existsSync } from "node:fs";
var DOCTOR_BUDGET_MS = 5e3;
function isServerBackend(name) {
  return name === "neo4j" || name === "falkordb-remote";
}
function holdsExclusiveLock(name) {
  return !isServerBackend(name) && name !== "falkordb";
}
function reportedBackend(stderr) {
  const parsed = parseDatabaseBanner(stderr);
  if (parsed.kind !== "ok") return void 0;
  const { name, source, host, database } = parsed.value;
  const detail = `${host ? `, host ${host}` : ""}${database ? `, database ${database}` : ""}`;
  return { name, source: `cgc's own report (${source}${detail})` };
}
function shownBackend(reported, detected) {
  return reported ?? detected ?? void 0;
}
function describeBackend(reported, detected) {
  const gating = detected ? `${detected.name} from ${detected.source}` : "no configured backend (treated as embedded)";
  if (!reported) return detected ? `${detected.name} \u2014 from ${detected.source}` : "unknown (treated as embedded)";
  const same = detected?.name === reported.name;
  return `${reported.name} \u2014 from ${reported.source}${same ? "" : `; the watcher's auto mode reads ${gating}`}`;
}
async function detectCgcBackend(seams) {
  const env = seams.env ?? process.env;
  for (const variable of ["CGC_RUNTIME_DB_TYPE", "DATABASE_TYPE", "DEFAULT_DATABASE"]) {
    const value = env[variable]?.trim();
    if (value) return { name: value.toLowerCase(), source: `environment (${variable})` };
  }
  const dotEnv = cgcDotEnvPath(env, seams.homeDir);
  if (seams.runner && existsSync(dotEnv)) {
    const result = await seams.runner.run(["doctor"], {
      kind: "probe",
      cwd: seams.cwd,
      takesLock: false,
      budgetMs: seams.budgetMs ?? DOCTOR_BUDGET_MS
    });
    if (result.code === "OK") {
      const parsed = parseDoctorDefaultDatabase(`${result.stderr}
${result.stdout}`);
      if (parsed.kind === "ok") return { name: parsed.value.name, source: `cgc doctor (${parsed.value.source})` };
    }
  }
  const fromFile = readCgcDotEnv(env, seams.homeDir);
  for (const variable of ["DATABASE_TYPE", "DEFAULT_DATABASE"]) {
    const value = fromFile[variable]?.trim();
    if (value) return { name: value.toLowerCase(), source: `~/.codegraphcontext/.env (${variable})` };
  }
  return null;
}

export {
  isServerBackend,
  holdsExclusiveLock,
  reportedBackend,
  shownBackend,
  describeBackend,
  detectCgcBackend
};
