// The suites load pi-cgc as pi does, from the bundle the manifest names (extensions/pi-cgc/, made from src/ by
// scripts/build.mjs): built here first, so that a test never runs an older build than the source it reads.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { PROJECT_ROOT } from "../helpers/cgc-env.ts";

export default function setup(): void {
  execFileSync(process.execPath, [join(PROJECT_ROOT, "scripts", "build.mjs")], { stdio: "inherit" });
}
