// Every temporary file of a test run goes under one scratch directory, removed when the run ends: the
// suites make thousands of temporary homes, agent directories and repositories (os.tmpdir() reads
// TMPDIR at each call, and the workers, cgc and pi inherit it), and a run must not leave them behind.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const scratch = mkdtempSync(join(tmpdir(), "pi-cgc-test-run-"));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = scratch;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(scratch, { recursive: true, force: true });
  };
}
