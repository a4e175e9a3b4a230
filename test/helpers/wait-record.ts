// Each wait's margin, for finding the bounds that sit close to what they wait for. With
// PI_CGC_WAIT_RECORD=<file> set, every wait of the suites (poll, waitFor, pi over RPC) appends one JSON
// line to the file: where it waits (the first frame of the suites' own code), its bound and how long it took.
// scripts/wait-margins.mjs reads the file and lists the waits that used the largest part of their bound.
import { appendFileSync } from "node:fs";

const RECORD = process.env.PI_CGC_WAIT_RECORD;

/** The first frame of the suites' own code (not a helper) on the caller's stack: `test/…/x.test.ts:123`. */
function site(): string {
  const frames = (new Error().stack ?? "").split("\n");
  const own = frames.find((line) => /\btest\/(?!helpers\/)[^\s():]+\.ts:\d+/.test(line)) ?? frames[3] ?? "";
  return /(test\/[^\s():]+:\d+)/.exec(own)?.[1] ?? own.trim();
}

/**
 * Starts recording one wait, where it is called from (so, before the wait's first await); the function returned
 * records its end, met or timed out. Without PI_CGC_WAIT_RECORD both do nothing.
 */
export function startWait(boundMs: number): (met: boolean) => void {
  if (!RECORD) return () => {};
  const where = site();
  const startedAt = Date.now();
  return (met) => {
    const line = { site: where, boundMs, tookMs: Date.now() - startedAt, met };
    appendFileSync(RECORD, `${JSON.stringify(line)}\n`);
  };
}

/** Records a whole test case against its timeout, under the site `<file> > <test name>`. */
export function recordTest(site: string, timeoutMs: number, tookMs: number, passed: boolean): void {
  if (!RECORD) return;
  appendFileSync(RECORD, `${JSON.stringify({ site, boundMs: timeoutMs, tookMs, met: passed })}\n`);
}
