// A separate process saving one config key again and again (test/reliability/concurrency.test.ts runs
// several at once): node --import tsx test/reliability/saver.ts <file> <key> <rounds> <first value>

import type { ConfigKey } from "../../src/config/keys.ts";
import { saveConfigValue } from "../../src/config/save.ts";

const [path, key, rounds, first] = process.argv.slice(2);
for (let round = 0; round < Number(rounds); round++) {
  const saved = await saveConfigValue(path as string, key as ConfigKey, String(Number(first) + round));
  if (!saved.ok) {
    console.error(saved.error);
    process.exit(2);
  }
}
