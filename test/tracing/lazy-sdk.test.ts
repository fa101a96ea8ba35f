// "Unset, nothing is loaded": outside the tracing package's startTracing (which imports the SDK
// dynamically, once OTEL_* asked for it), code imports @opentelemetry/* for types only; a hot path asks
// activeTracing() and, with tracing off, touches nothing else.

import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "#testkit/processes";

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.parentPath.includes("node_modules"))
    .map((e) => path.join(e.parentPath, e.name));
}

describe("the OpenTelemetry SDK is loaded only when tracing is configured", () => {
  it("has no value import of @opentelemetry/* anywhere in apps/ and packages/", () => {
    const files = ["apps", "packages"].flatMap((d) =>
      readdirSync(path.join(REPO_ROOT, d)).flatMap((p) => {
        const src = path.join(REPO_ROOT, d, p, "src");
        try {
          return sources(src);
        } catch {
          return [];
        }
      }),
    );
    expect(files.length).toBeGreaterThan(100);
    const offenders = files.flatMap((file) =>
      [
        ...readFileSync(file, "utf8").matchAll(
          /^import\s+(?!type\b)[^;]*?from\s+"(@opentelemetry\/[^"]+)"/gms,
        ),
      ].map((m) => `${path.relative(REPO_ROOT, file)}: ${m[1]}`),
    );
    expect(offenders).toEqual([]);
    // The SDK itself comes in through dynamic imports, in startTracing only.
    const start = readFileSync(path.join(REPO_ROOT, "packages/tracing/src/start-tracing.ts"), "utf8");
    expect(start).toMatch(/import\("@opentelemetry\/sdk-trace"\)/);
  });
});
