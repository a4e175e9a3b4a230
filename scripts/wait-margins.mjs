// The waits of a test run that used the largest part of their bound (test/helpers/wait-record.ts):
//   PI_CGC_WAIT_RECORD=/tmp/waits.jsonl npm test; node scripts/wait-margins.mjs /tmp/waits.jsonl [fraction]
// Prints each place that waited, once, with its longest wait against its bound, where that share is at least
// `fraction` (default 0.2: a bound less than five times what it waited for). Waits that were to time out (a
// check that something does not happen) are listed apart.
import { readFileSync } from "node:fs";

const [file, fraction = "0.2"] = process.argv.slice(2);
if (!file) {
  console.error("usage: node scripts/wait-margins.mjs <record.jsonl> [fraction]");
  process.exit(2);
}
const sites = new Map();
for (const line of readFileSync(file, "utf8").split("\n")) {
  if (!line.trim()) continue;
  const wait = JSON.parse(line);
  const site = sites.get(wait.site) ?? { site: wait.site, waits: 0, timedOut: 0, longest: undefined };
  site.waits++;
  if (!wait.met) site.timedOut++;
  else if (!site.longest || wait.tookMs / wait.boundMs > site.longest.tookMs / site.longest.boundMs)
    site.longest = wait;
  sites.set(wait.site, site);
}
const share = (site) => (site.longest ? site.longest.tookMs / site.longest.boundMs : 0);
const close = [...sites.values()].filter((site) => share(site) >= Number(fraction)).sort((a, b) => share(b) - share(a));
console.log(`${sites.size} places waited; ${close.length} used at least ${fraction} of their bound:`);
for (const site of close)
  console.log(
    `${share(site).toFixed(2)}  ${site.longest.tookMs} of ${site.longest.boundMs} ms  ${site.site}  (${site.waits} waits)`,
  );
const expired = [...sites.values()].filter((site) => site.timedOut > 0);
if (expired.length > 0)
  console.log("\nwaits that ran to their bound (a check that something does not happen, or a failure):");
for (const site of expired) console.log(`${site.timedOut} of ${site.waits}  ${site.site}`);
