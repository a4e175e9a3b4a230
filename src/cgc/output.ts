// The one output policy (ADR 0005): everything cgc prints that reaches the agent or the user passes
// strip → redact → cap (head and tail, pi's truncation helpers) → spill the full redacted text to a
// private file outside the workspace, removed at session end. Parsing happens before, on raw text.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { formatSize, truncateHead, truncateTail } from "@mariozechner/pi-coding-agent";
import { isWithin } from "../workspace/root.ts";

export interface OutputLimits {
  maxBytes: number;
  maxLines: number;
}

export interface PolicyResult {
  text: string;
  truncated: boolean;
  originalBytes: number;
  spillPath?: string;
}

/** Terminal escape sequences (Node's own stripper), then the C0 controls other than tab and newline. */
export function stripControl(text: string): string {
  const visible = stripVTControlCharacters(text.replace(/\r\n/g, "\n"));
  let out = "";
  for (const char of visible) {
    const code = char.charCodeAt(0);
    if (code === 9 || code === 10 || (code >= 32 && code !== 127 && !(code >= 0x80 && code < 0xa0))) out += char;
  }
  return out;
}

// Secret shapes with a recognisable prefix or context. No bare "long random string" rule: that would eat
// git SHAs, content hashes and long paths, which the agent needs intact.
const SECRET_PATTERNS: Array<[RegExp, string]> = [
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g, "[REDACTED private key]"],
  [/\b(AKIA|ASIA)[0-9A-Z]{16}\b/g, "[REDACTED aws key]"],
  [/\bgh[pousr]_[A-Za-z0-9]{36,}\b/g, "[REDACTED github token]"],
  [/\bgithub_pat_[A-Za-z0-9_]{40,}\b/g, "[REDACTED github token]"],
  [/\bglpat-[A-Za-z0-9_-]{20,}\b/g, "[REDACTED gitlab token]"],
  [/\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}\b/g, "[REDACTED api key]"],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, "[REDACTED slack token]"],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, "[REDACTED google key]"],
  [/\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b/g, "[REDACTED jwt]"],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{16,}/g, "$1 [REDACTED]"],
  [/(:\/\/[^:/\s@]+:)[^@\s/]+@/g, "$1[REDACTED]@"],
  [
    /\b([A-Za-z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY)[A-Za-z0-9_]*)(\s*[=:]\s*)(["']?)([^\s"',;]{4,})\3/gi,
    "$1$2$3[REDACTED]$3",
  ],
];

export function redactSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** A per-session directory for spilled output: private, outside the workspace, removed at session end. */
export function createSpillDir(workspace: string) {
  let dir: string | undefined;
  let counter = 0;
  return {
    write(text: string): string {
      dir ??= makePrivateDir(workspace);
      const path = join(dir, `cgc-output-${++counter}.txt`);
      writeFileSync(path, text, { mode: 0o600 });
      chmodSync(path, 0o600); // the umask may have narrowed it further, never widened it; be exact
      return path;
    },
    get dir() {
      return dir;
    },
    cleanup(): void {
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    },
  };
}

export type SpillDir = ReturnType<typeof createSpillDir>;

function makePrivateDir(workspace: string): string {
  const dir = mkdtempSync(join(tmpdir(), "pi-cgc-"));
  chmodSync(dir, 0o700);
  if (isWithin(resolve(workspace), dir)) {
    throw new Error(`refusing to spill cgc output inside the workspace (${dir}); set TMPDIR elsewhere`);
  }
  return dir;
}

/** strip → redact → cap head and tail → spill. */
export function applyOutputPolicy(raw: string, limits: OutputLimits, spill: SpillDir): PolicyResult {
  const clean = redactSecrets(stripControl(raw));
  const originalBytes = Buffer.byteLength(clean, "utf8");
  const lines = clean.split("\n").length;
  if (originalBytes <= limits.maxBytes && lines <= limits.maxLines) {
    return { text: clean, truncated: false, originalBytes };
  }
  const half = { maxBytes: Math.floor(limits.maxBytes / 2), maxLines: Math.max(1, Math.floor(limits.maxLines / 2)) };
  const head = truncateHead(clean, half);
  const tail = truncateTail(clean, half);
  const spillPath = spill.write(clean);
  const omitted = originalBytes - head.outputBytes - tail.outputBytes;
  const marker = `[… output capped: ${formatSize(originalBytes)} (${lines} lines) in all, ${formatSize(Math.max(0, omitted))} omitted here; full text: ${spillPath} …]`;
  return { text: `${head.content}\n${marker}\n${tail.content}`, truncated: true, originalBytes, spillPath };
}
