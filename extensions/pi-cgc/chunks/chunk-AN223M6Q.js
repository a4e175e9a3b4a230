// src/cgc/parse.ts
var ok = (value) => ({ kind: "ok", value });
var unknown = (reason) => ({ kind: "unknown", reason });
function linesOf(text) {
  return text.split(/\r?\n/);
}
function completeLines(text) {
  const lines = linesOf(text);
  lines.pop();
  return lines;
}
function parseVersion(text) {
  for (const line of completeLines(text)) {
    const match = /^CodeGraphContext (\d+)\.(\d+)\.(\d+)(\S*)/.exec(line.trim());
    if (match) {
      const [, major, minor, patch, suffix] = match;
      return ok({ version: `${major}.${minor}.${patch}${suffix}`, major: +major, minor: +minor, patch: +patch });
    }
  }
  return unknown("no `CodeGraphContext <version>` line");
}
function parseDoctorDefaultDatabase(text) {
  for (const line of completeLines(text)) {
    const match = /^\s*Default database: (\S+) \(source: (.*)\)\s*$/.exec(line);
    if (match) {
      const [, name, source] = match;
      if (count(source, "(") !== count(source, ")")) return unknown(`unbalanced source: ${line.trim()}`);
      const isPath = /[\\/]/.test(source);
      return ok({ name: name.toLowerCase(), source: isPath ? source : source.toLowerCase() });
    }
  }
  return unknown("no `Default database:` line");
}
function parseDatabaseBanner(text) {
  for (const line of completeLines(text)) {
    const match = /^Using database: (\S+) \(source: (.*)\)\s*$/.exec(line);
    if (!match) continue;
    const [, name, inner] = match;
    const detail = /^(.*), (host|database): ([^,()]*)$/.exec(inner);
    const source = detail?.[1] ?? inner;
    if (count(source, "(") !== count(source, ")")) return unknown(`unbalanced source: ${line.trim()}`);
    const banner = { name: name.toLowerCase(), source };
    if (detail?.[2] === "host") banner.host = detail[3];
    if (detail?.[2] === "database") banner.database = detail[3];
    return ok(banner);
  }
  return unknown("no `Using database:` line");
}
function count(text, char) {
  return text.split(char).length - 1;
}
function richHeader(line) {
  const trimmed = line.trim();
  if (!trimmed.startsWith("\u2503") || !trimmed.endsWith("\u2503")) return void 0;
  return trimmed.slice(1, -1).split("\u2503").map((cell) => cell.trim());
}
function richRow(line) {
  const trimmed = line.trimEnd();
  if (!trimmed.startsWith("\u2502 ") || !trimmed.endsWith(" \u2502") || trimmed.length < 4) return void 0;
  return trimmed.slice(2, -2).split(" \u2502 ");
}
function richTable(lines, columns) {
  const start = lines.findIndex((line) => richHeader(line)?.join("\0") === columns.join("\0"));
  if (start < 0) return void 0;
  const rows = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim().startsWith("\u2514")) return rows;
    const row = richRow(line);
    if (row) rows.push(row);
  }
  return void 0;
}
var INDEX_SKIPPED = /^Repository '(.*)' is already indexed with (\d+) files\. Skipping\.$/;
var INDEX_RESUMED = / has only (\d+) of (\d+) files indexed\. Continuing\.$/;
function indexResumed(stdout) {
  return completeLines(stdout).map((line) => line.trimEnd()).find((line) => INDEX_RESUMED.test(line));
}
var INDEX_IN_PART = /; (\d+ files? only in part \(.*?\): .*?); written with /;
function indexInPart(stdout) {
  for (const line of completeLines(stdout)) {
    const match = INDEX_IN_PART.exec(line);
    if (match) return match[1];
  }
  return void 0;
}
function indexSkipped(stdout) {
  return completeLines(stdout).some((line) => INDEX_SKIPPED.test(line.trimEnd()));
}
function tracebackError(lines) {
  const start = lines.findIndex((line) => /Traceback \(most recent call last\)/.test(line));
  if (start < 0) return void 0;
  return lines.slice(start + 1).find((line) => /^[A-Za-z_][\w.]*(Error|Exception|Interrupt): /.test(line));
}
var MAX_JSON_STARTS = 32;
function parseQueryJson(stdout) {
  const lines = linesOf(stdout);
  let tried = 0;
  for (let i = 0; i < lines.length && tried < MAX_JSON_STARTS; i++) {
    const first = lines[i].trimStart();
    if (!first.startsWith("[") && !first.startsWith("{")) continue;
    tried++;
    const parsed = parseJson(lines.slice(i).join("\n"));
    if (parsed === void 0) continue;
    if (!Array.isArray(parsed)) return unknown("query output is JSON but not an array of rows");
    if (!parsed.every((row) => typeof row === "object" && row !== null && !Array.isArray(row))) {
      return unknown("query output holds a row that is not an object");
    }
    return ok(parsed);
  }
  return unknown(tried === 0 ? "no JSON in query output" : "query output is not complete JSON");
}
function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return void 0;
  }
}
function detectBusy(text) {
  return linesOf(text).some(
    (line) => line.startsWith("Another CGC process already has this embedded database open") || /^[A-Za-z]/.test(line) && /IO exception: Could not set lock on file\b/.test(line)
  );
}
var FAILURE_LINE = [
  /^An error occurred/,
  /^Repository not found: /,
  /^Repository not found in graph: /,
  /^Error: /,
  /^Database (Connection|Configuration) Error: /,
  /^Configuration Error: /,
  /^Critical Error: /,
  /^Query Error \(/
];
var DAMAGED_DATABASE = [
  /^Database Connection Error: Runtime exception: Unable to open database\. The file is not a valid Kuzu database file!/,
  /^Database Connection Error: Runtime exception: Reading past the end of the file .* with size \d+ at offset \d+/
];
function detectDamagedDatabase(text) {
  return linesOf(text).find((line) => DAMAGED_DATABASE.some((pattern) => pattern.test(line)))?.trim();
}
function detectWatchFailure(text) {
  return tracebackError(completeLines(text));
}
function detectCgcFailure(text) {
  const lines = linesOf(text);
  const line = lines.find((candidate) => FAILURE_LINE.some((pattern) => pattern.test(candidate)));
  return line?.trim() ?? tracebackError(lines);
}
function richPrinted(text) {
  return text.replace(
    /(\\*)\[([a-z#/@][^[]*?)\]/gi,
    (match, backslashes) => backslashes.length % 2 === 1 ? match : backslashes
  );
}
function parseContextList(text) {
  const lines = completeLines(text);
  const failure = detectCgcFailure(lines.join("\n"));
  if (failure) return unknown(failure);
  const mode = lines.map((line) => /^Current Mode: (\S+)\s*$/.exec(line.trim())?.[1]).find(Boolean);
  if (!mode) return unknown("no `Current Mode:` line");
  const named = lines.map((line) => /^Default Context: (.+?)\s*$/.exec(line.trim())?.[1]).find(Boolean);
  const defaultContext = named && named !== "<none>" ? named : void 0;
  if (lines.some((line) => line.trim() === "No custom contexts defined. Using global default.")) {
    return ok({ mode, defaultContext, contexts: [] });
  }
  const rows = richTable(lines, ["Name", "Database", "DB Path", "Repos Linked"]);
  if (!rows) return unknown("no complete `Name \u2502 Database \u2502 DB Path \u2502 Repos Linked` table");
  const contexts = [];
  for (const cells of rows) {
    const [nameCell, database, dbPath, repos] = cells.map((cell) => cell.trim());
    if (cells.length !== 4 || !nameCell || !database || !dbPath || !/^\d+$/.test(repos ?? "")) {
      return unknown(`unreadable row (wrapped or cut?): ${cells.join(" \u2502 ")}`);
    }
    const isDefault = nameCell.endsWith(" *");
    contexts.push({
      name: isDefault ? nameCell.slice(0, -2) : nameCell,
      database,
      dbPath,
      reposLinked: Number(repos),
      isDefault
    });
  }
  return ok({ mode, defaultContext, contexts });
}
function parseContextCreate(text, name) {
  const lines = completeLines(text).map((line) => line.trim());
  if (lines.some((line) => line.includes(`Created context '${name}' (DB: `))) return ok("created");
  if (lines.includes(`Context '${name}' already exists.`)) return ok("exists");
  return unknown(detectCgcFailure(lines.join("\n")) ?? `no "Created context '${name}'" line`);
}

export {
  parseVersion,
  parseDoctorDefaultDatabase,
  parseDatabaseBanner,
  indexResumed,
  indexInPart,
  indexSkipped,
  parseQueryJson,
  parseJson,
  detectBusy,
  detectDamagedDatabase,
  detectWatchFailure,
  detectCgcFailure,
  richPrinted,
  parseContextList,
  parseContextCreate
};
