// The series a PromQL expression reads, without a Prometheus: strings, label matchers, ranges and grouping
// clauses are removed, then every identifier that is not a function, an aggregation or a keyword is a series.

const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring"]);

/** Metric names read by `expr`, e.g. `sum by (le) (rate(x_bucket[5m]))` → ["x_bucket"]. */
export function seriesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, "")
    .replace(/\[[^\]]*\]/g, "")
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, "");
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w.$])([a-zA-Z_:][\w:]*)(\s*\()?/g)) {
    if (match[2] || KEYWORDS.has(match[1]!)) continue;
    names.add(match[1]!);
  }
  return [...names];
}

/** Families a Prometheus text exposition declares (`# TYPE name kind`), with the series each one yields. */
export function declaredSeries(text: string): Set<string> {
  const series = new Set<string>();
  for (const [, name, kind] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    series.add(name!);
    if (kind === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) series.add(name! + suffix);
    if (kind === "summary") for (const suffix of ["_sum", "_count"]) series.add(name! + suffix);
  }
  return series;
}
