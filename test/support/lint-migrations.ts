import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./source-files.ts";

const SQUAWK = path.join(REPO_ROOT, "node_modules/.bin/squawk");

/**
 * Rules off for every online migration, each with why. The runner sets lock_timeout on every step itself
 * (squawk reads the file, not the runner); a statement_timeout would cut a concurrent index build or a batch
 * that is slow but harmless, and each batch is bounded by its `limit` instead.
 */
export const EXCLUDED_RULES = ["require-lock-timeout", "require-statement-timeout"];

interface Finding {
  file: string;
  line: number;
  rule_name: string;
  message: string;
}

/** `-- squawk-ignore rule-a, rule-b: why` (our form: squawk's own takes no reason, so we read it ourselves). */
const IGNORE = /^\s*--\s*squawk-ignore\b(.*)$/;
const REASONED = /^\s+([a-z-]+(?:\s*,\s*[a-z-]+)*)\s*:\s*(\S.*)$/;

/** The rules the comments right above the statement at `line` (0-based) except, and its bad ignore lines. */
function exceptedAt(lines: readonly string[], line: number): { rules: Set<string>; start: number } {
  let start = line;
  // Back to the statement's first line: stop at a blank line, a comment or the end of the statement before.
  while (start > 0 && !/^\s*(--.*)?$/.test(lines[start - 1]!) && !/;\s*(--.*)?$/.test(lines[start - 1]!))
    start--;
  const rules = new Set<string>();
  for (let i = start - 1; i >= 0 && /^\s*--/.test(lines[i]!); i--) {
    const reasoned = REASONED.exec(IGNORE.exec(lines[i]!)?.[1] ?? "");
    for (const rule of reasoned?.[1]?.split(/\s*,\s*/) ?? []) rules.add(rule);
  }
  return { rules, start };
}

/**
 * What squawk finds in `files` that no `-- squawk-ignore <rule>: <why>` right above the statement excepts, and
 * every squawk-ignore without a reason (squawk's own form would silence a rule without saying why). One line
 * each, `file:line rule message`; empty when the files are clean.
 */
export async function lintMigrations(files: readonly string[]): Promise<string[]> {
  if (files.length === 0) return [];
  const { stdout } = await promisify(execFile)(
    SQUAWK,
    ["--reporter", "json", "--exclude", EXCLUDED_RULES.join(","), ...files],
    { maxBuffer: 16 * 1024 * 1024 },
  ).catch((error: { stdout?: string; code?: number }) => {
    if (error.code === 1 && error.stdout) return { stdout: error.stdout };
    throw error;
  });
  const findings = JSON.parse(stdout) as Finding[];
  const problems: string[] = [];
  for (const file of files) {
    const lines = (await readFile(file, "utf8")).split("\n");
    const name = path.basename(file);
    lines.forEach((text, i) => {
      const ignore = IGNORE.exec(text);
      if (ignore && !REASONED.test(ignore[1]!)) {
        problems.push(
          `${name}:${i + 1} squawk-ignore without a reason: write "-- squawk-ignore <rule>: <why>"`,
        );
      }
    });
    for (const f of findings.filter((f) => path.resolve(f.file) === path.resolve(file))) {
      // Our reasoned comments are unknown rule names to squawk; the check above holds them instead.
      if (f.rule_name === "unused-ignore") continue;
      const { rules, start } = exceptedAt(lines, f.line);
      if (!rules.has(f.rule_name)) problems.push(`${name}:${start + 1} ${f.rule_name} ${f.message}`);
    }
  }
  return problems;
}
