/** One SQL statement of a migration: its text as written, and its code with comments and literals blanked. */
export interface SqlStatement {
  /** The statement as written, trimmed, without its closing `;`. */
  text: string;
  /**
   * The statement with comments removed, string and dollar-quoted bodies replaced by `''` and `$$`, whitespace
   * collapsed and lower-cased: what the step rules and the lock classifier read, so a word inside a function
   * body or a comment never counts.
   */
  code: string;
}

/**
 * Splits SQL into statements at top-level semicolons, stepping over `'…'` (and `E'…'`), `"…"`, `$tag$…$tag$`,
 * `-- …` and nested block comments. Small on purpose: migrations are our own files, not arbitrary SQL.
 */
export function splitStatements(sql: string): SqlStatement[] {
  const statements: SqlStatement[] = [];
  let start = 0;
  let code = "";
  let i = 0;
  const flush = (end: number) => {
    const text = sql.slice(start, end).trim();
    const squeezed = code.replace(/\s+/g, " ").trim().toLowerCase();
    if (squeezed.length > 0) statements.push({ text, code: squeezed });
    code = "";
    start = end + 1;
  };
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (c === "-" && next === "-") {
      const end = sql.indexOf("\n", i);
      i = end === -1 ? sql.length : end;
      code += " ";
    } else if (c === "/" && next === "*") {
      let depth = 1;
      i += 2;
      while (i < sql.length && depth > 0) {
        const pair = sql.slice(i, i + 2);
        const step = pair === "/*" ? 1 : pair === "*/" ? -1 : 0;
        depth += step;
        i += step === 0 ? 1 : 2;
      }
      code += " ";
    } else if (c === "'") {
      const escapes = /[eE]/.test(sql[i - 1] ?? "") && !/[\w$]/.test(sql[i - 2] ?? "");
      i++;
      while (i < sql.length) {
        if (escapes && sql[i] === "\\") i += 2;
        else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
        else if (sql[i] === "'") break;
        else i++;
      }
      i++;
      code += "''";
    } else if (c === '"') {
      const end = sql.indexOf('"', i + 1);
      const stop = end === -1 ? sql.length : end + 1;
      code += sql.slice(i, stop);
      i = stop;
    } else if (c === "$" && !/[\w$]/.test(sql[i - 1] ?? "")) {
      const tag = /^\$([A-Za-z_]\w*)?\$/.exec(sql.slice(i));
      if (tag) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        i = end === -1 ? sql.length : end + tag[0].length;
        code += "$$";
      } else {
        code += c;
        i++;
      }
    } else if (c === ";") {
      flush(i);
      i++;
    } else {
      code += c;
      i++;
    }
  }
  flush(sql.length);
  return statements;
}
