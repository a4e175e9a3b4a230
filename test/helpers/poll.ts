// Waiting in tests: a condition polled until it holds, with a deadline, never a bare sleep. The one poll
// loop of the suites and the helpers.

import { startWait } from "./wait-record.ts";

type Falsy = undefined | null | false | 0 | "";

/**
 * Calls `condition` (synchronous or not) every `intervalMs` until it returns a truthy value, and resolves
 * with that value; resolves undefined once `timeoutMs` has passed (the condition is asked once more then).
 */
export async function poll<T>(
  condition: () => T | Falsy | Promise<T | Falsy>,
  timeoutMs: number,
  intervalMs = 25,
): Promise<T | undefined> {
  const ended = startWait(timeoutMs);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value) {
      ended(true);
      return value;
    }
    if (Date.now() > deadline) {
      ended(false);
      return undefined;
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** `poll`, failing with what it waited for when the deadline passes. */
export async function waitFor<T>(
  condition: () => T | Falsy | Promise<T | Falsy>,
  what: string,
  timeoutMs = 60_000,
  intervalMs = 25,
): Promise<T> {
  const value = await poll(condition, timeoutMs, intervalMs);
  if (!value) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  return value;
}
