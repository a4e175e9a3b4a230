// ADR 0010, "Backend detection": which backend cgc will use, in cgc's own precedence order, bounded, failing open to
// "unknown" (treated as embedded). Shared by readiness and the watcher's auto mode.
import { existsSync } from "node:fs";
import { cgcDotEnvPath, readCgcDotEnv } from "../workspace/cgc-config.ts";
import { parseDatabaseBanner, parseDoctorDefaultDatabase } from "./parse.ts";
import type { Runner } from "./runner.ts";

export const DOCTOR_BUDGET_MS = 5_000;

export interface Backend {
  name: string;
  source: string;
}

export interface BackendDetectionSeams {
  env?: NodeJS.ProcessEnv;
  homeDir?: string;
  runner?: Pick<Runner, "run">;
  cwd: string;
  budgetMs?: number;
}

/** Only these hold the graph in a server that several processes may share; everything else is conservative. */
export function isServerBackend(name: string | null | undefined): boolean {
  return name === "neo4j" || name === "falkordb-remote";
}

/** Embedded KùzuDB (and a backend not known, treated like it): one process may open the database at a time. */
export function holdsExclusiveLock(name: string | null | undefined): boolean {
  return !isServerBackend(name) && name !== "falkordb";
}

/**
 * The backend cgc itself named on one call's stderr (`Using database: falkordb (source: auto-detect)`,
 * printed by every command that opens the database, lock failures included), for display: what the user,
 * the notices and the coverage note are told. Undefined when the call printed no such line (`--version`,
 * a neo4j choice without credentials). The watcher's gating keeps using detectCgcBackend.
 */
export function reportedBackend(stderr: string): Backend | undefined {
  const parsed = parseDatabaseBanner(stderr);
  if (parsed.kind !== "ok") return undefined;
  const { name, source, host, database } = parsed.value;
  const detail = `${host ? `, host ${host}` : ""}${database ? `, database ${database}` : ""}`;
  return { name, source: `cgc's own report (${source}${detail})` };
}

/** The backend to name to the user and the agent: cgc's own report when there is one, else the detection's. */
export function shownBackend(reported: Backend | undefined, detected: Backend | null | undefined): Backend | undefined {
  return reported ?? detected ?? undefined;
}

/** `/cgc status`'s backend line: what cgc reports, and what the watcher's gating reads when that differs. */
export function describeBackend(reported: Backend | undefined, detected: Backend | null | undefined): string {
  const gating = detected ? `${detected.name} from ${detected.source}` : "no configured backend (treated as embedded)";
  if (!reported) return detected ? `${detected.name} — from ${detected.source}` : "unknown (treated as embedded)";
  const same = detected?.name === reported.name;
  return `${reported.name} — from ${reported.source}${same ? "" : `; the watcher's auto mode reads ${gating}`}`;
}

export async function detectCgcBackend(seams: BackendDetectionSeams): Promise<Backend | null> {
  const env = seams.env ?? process.env;
  for (const variable of ["CGC_RUNTIME_DB_TYPE", "DATABASE_TYPE", "DEFAULT_DATABASE"]) {
    const value = env[variable]?.trim();
    if (value) return { name: value.toLowerCase(), source: `environment (${variable})` };
  }
  const dotEnv = cgcDotEnvPath(env, seams.homeDir);
  // cgc doctor writes a default .env (DEFAULT_DATABASE=falkordb) when there is none, and then reports that
  // file as the source: a side effect on the user's cgc config and a verdict about its own write. Ask it
  // only when the user's cgc already has a config (docs/adr/0010).
  if (seams.runner && existsSync(dotEnv)) {
    const result = await seams.runner.run(["doctor"], {
      kind: "probe",
      cwd: seams.cwd,
      takesLock: false,
      budgetMs: seams.budgetMs ?? DOCTOR_BUDGET_MS,
    });
    // ADR 0010: any failure falls through — a non-zero exit (doctor's exit 1 when a check fails, as on
    // this machine's unusable falkordb default), a timeout, output without the line.
    if (result.code === "OK") {
      const parsed = parseDoctorDefaultDatabase(`${result.stderr}\n${result.stdout}`);
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
