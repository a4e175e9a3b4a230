// Regenerates docs/configuration.md and the README's configuration table from the key table.
// Run: npm run docs
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderConfigurationDoc, withReadmeTable } from "../src/config/docs.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
writeFileSync(`${root}docs/configuration.md`, renderConfigurationDoc());
const readmePath = `${root}README.md`;
writeFileSync(readmePath, withReadmeTable(readFileSync(readmePath, "utf8")));
console.log("docs/configuration.md and the README table regenerated");
