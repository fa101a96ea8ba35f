import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { describe, expect, it } from "vitest";
import { ConfigError, ENV_VARIABLES, loadEnv } from "./env.ts";

describe("loadEnv", () => {
  it("applies defaults and splits lists on spaces and commas", () => {
    const env = loadEnv({
      LOOPS_WEBHOOK_SECRETS: "whsec_abc, whsec_def whsec_ghi",
      LOOPS_MERCHANT_IDS: "mer_1,mer_2",
    });
    expect(env.PORT).toBe(8080);
    expect(env.LOOPS_WEBHOOK_SECRETS).toEqual(["whsec_abc", "whsec_def", "whsec_ghi"]);
    expect(env.LOOPS_MERCHANT_IDS).toEqual(["mer_1", "mer_2"]);
    expect(env.LOOPS_SYNC_MIGRATE_ON_START).toBe(false);
    expect(env.RETENTION_DAYS).toBe(35);
  });

  it("takes a CATCHUP_CRON only when graphile-worker's crontab parser does", () => {
    expect(loadEnv({ CATCHUP_CRON: "0 */2 * * 1-5" }).CATCHUP_CRON).toBe("0 */2 * * 1-5");
    for (const bad of ["every now and then", "61 * * * *", "* * * *", "* * * * * *"]) {
      expect(() => loadEnv({ CATCHUP_CRON: bad })).toThrow(/^CATCHUP_CRON: got .*, expected a cron schedule/);
    }
  });

  it("refuses a HOST or DATABASE_URL that cannot be used", () => {
    expect(loadEnv({ HOST: "::" }).HOST).toBe("::");
    expect(loadEnv({ HOST: "localhost" }).HOST).toBe("localhost");
    expect(() => loadEnv({ HOST: "http://0.0.0.0:80" })).toThrow(
      /^HOST: got "http:\/\/0\.0\.0\.0:80", expected an IP address or a host name$/,
    );
    expect(() => loadEnv({ DATABASE_URL: "postgres://user:pw@[bad" })).toThrow(
      /^DATABASE_URL: got a value of \d+ characters \(hidden\), expected a postgres:\/\/ connection URL$/,
    );
  });

  it(".env.example lists every variable, set to its default or commented out when it has none", () => {
    const text = readFileSync(new URL("../../../.env.example", import.meta.url), "utf8");
    const listed = [...text.matchAll(/^#? ?([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);
    expect(listed).toEqual([...ENV_VARIABLES]);
    const set = parseEnv(text);
    const defaults = loadEnv({ DATABASE_URL: "postgres://x" }) as Record<string, unknown>;
    for (const [name, value] of Object.entries(set)) {
      const parsed = loadEnv({ DATABASE_URL: "postgres://x", [name]: value }) as Record<string, unknown>;
      expect({ name, value: parsed[name] }).toEqual({ name, value: defaults[name] });
    }
  });

  it("names the variable, what it got and what it expects, in one line", () => {
    expect(() => loadEnv({ PORT: "eighty" })).toThrow(/^PORT: got "eighty", expected a whole number$/);
    expect(() => loadEnv({ LOOPS_API_URL: "ftp://x" })).toThrow(
      /^LOOPS_API_URL: got "ftp:\/\/x", expected an http\(s\) URL$/,
    );
  });

  it("never repeats a secret in its message", () => {
    try {
      loadEnv({ LOOPS_WEBHOOK_SECRETS: "not-a-whsec-supersecret" });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).toMatch(
        /^LOOPS_WEBHOOK_SECRETS: got a value of 23 characters \(hidden\), expected whsec_/,
      );
      expect(message).not.toContain("supersecret");
    }
  });

  it("reads ADMIN_PORT, else its alias METRICS_PORT, else 9091; the admin listener binds loopback", () => {
    expect(loadEnv({}).ADMIN_PORT).toBe(9091);
    expect(loadEnv({}).ADMIN_HOST).toBe("127.0.0.1");
    expect(loadEnv({ METRICS_PORT: "9300" }).ADMIN_PORT).toBe(9300);
    expect(loadEnv({ METRICS_PORT: "9300", ADMIN_PORT: "9400" }).ADMIN_PORT).toBe(9400);
    expect(() => loadEnv({ ADMIN_PORT: "70000" })).toThrow(/^ADMIN_PORT: got "70000", expected a port/);
  });

  it("refuses a short ADMIN_TOKEN without repeating it", () => {
    expect(() => loadEnv({ ADMIN_TOKEN: "hunter2" })).toThrow(
      /^ADMIN_TOKEN: got a value of 7 characters \(hidden\), expected at least 16 characters/,
    );
    expect(loadEnv({ ADMIN_TOKEN: "a".repeat(32) }).ADMIN_TOKEN).toBe("a".repeat(32));
  });

  it("refuses a missing required variable", () => {
    expect(() => loadEnv({}, { require: ["LOOPS_CLIENT_ID"] })).toThrow(
      "LOOPS_CLIENT_ID: got nothing (unset), expected it to be set (see README, Configuration)",
    );
  });

  it("reads forwarding's variables, refusing a bad or missing FORWARD_SECRET without repeating it", () => {
    const secret = `whsec_${Buffer.from("forward").toString("base64")}`;
    const env = loadEnv({
      FORWARD_URL: "https://backend.example.com/changes",
      FORWARD_SECRET: secret,
      FORWARD_RESOURCES: "order, menu",
    });
    expect([env.FORWARD_RESOURCES, env.FORWARD_TIMEOUT_MS, env.FORWARD_MAX_AGE_HOURS]).toEqual([
      ["order", "menu"],
      10_000,
      24,
    ]);
    expect(() => loadEnv({ FORWARD_URL: "https://backend.example.com/changes" })).toThrow(
      /^FORWARD_SECRET: got nothing \(unset\), expected a whsec_… secret/,
    );
    expect(() => loadEnv({ FORWARD_SECRET: "whsec_hunter2!" })).toThrow(
      /^FORWARD_SECRET: got a value of 14 characters \(hidden\), expected a whsec_… secret/,
    );
    expect(() => loadEnv({ FORWARD_RESOURCES: "order,pizza" })).toThrow(
      /^FORWARD_RESOURCES: got "order,pizza", expected names among order, /,
    );
  });

  it("reads several FORWARD_SECRETs for a rotation, and the endpoint's bounds", () => {
    const a = `whsec_${Buffer.from("old-secret").toString("base64")}`;
    const b = `whsec_${Buffer.from("new-secret").toString("base64")}`;
    const defaults = loadEnv({});
    expect([defaults.FORWARD_MAX_IN_FLIGHT, defaults.FORWARD_MAX_RPS]).toEqual([64, undefined]);
    const env = loadEnv({
      FORWARD_SECRET: ` ${a}  ${b} `,
      FORWARD_MAX_IN_FLIGHT: "8",
      FORWARD_MAX_RPS: "20",
    });
    expect([env.FORWARD_SECRET, env.FORWARD_MAX_IN_FLIGHT, env.FORWARD_MAX_RPS]).toEqual([
      `${a}  ${b}`,
      8,
      20,
    ]);
    expect(() => loadEnv({ FORWARD_SECRET: `${a},${b}` })).toThrow(
      /^FORWARD_SECRET: got a value of \d+ characters \(hidden\), expected .*or several separated by spaces$/,
    );
    expect(() => loadEnv({ FORWARD_MAX_IN_FLIGHT: "0" })).toThrow(
      'FORWARD_MAX_IN_FLIGHT: got "0", expected a number above 0',
    );
    expect(() => loadEnv({ FORWARD_MAX_IN_FLIGHT: "5000" })).toThrow(
      'FORWARD_MAX_IN_FLIGHT: got "5000", expected a number from 1 to 1000',
    );
    expect(() => loadEnv({ FORWARD_MAX_RPS: "2.5" })).toThrow(
      'FORWARD_MAX_RPS: got "2.5", expected a whole number',
    );
  });

  it("reads the standard OTEL_* variables, refusing what the exporters here cannot do", () => {
    const off = loadEnv({});
    expect(off.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(off.OTEL_EXPORTER_OTLP_PROTOCOL).toBe("http/protobuf");
    expect(off.OTEL_TRACES_SAMPLER).toBe("parentbased_always_on");
    expect(off.OTEL_RESOURCE_ATTRIBUTES).toEqual({});
    const on = loadEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.01",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=prod, team=a%2Cb",
    });
    expect(on.OTEL_TRACES_SAMPLER_ARG).toBe(0.01);
    expect(on.OTEL_RESOURCE_ATTRIBUTES).toEqual({ "deployment.environment.name": "prod", team: "a,b" });
    expect(() => loadEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toThrow(
      /^OTEL_EXPORTER_OTLP_PROTOCOL: got "grpc", expected http\/protobuf or http\/json \(grpc is not supported\)$/,
    );
    expect(() => loadEnv({ OTEL_TRACES_SAMPLER_ARG: "5" })).toThrow(
      /^OTEL_TRACES_SAMPLER_ARG: got "5", expected a ratio from 0 to 1$/,
    );
    expect(() => loadEnv({ OTEL_RESOURCE_ATTRIBUTES: "novalue" })).toThrow(
      /^OTEL_RESOURCE_ATTRIBUTES: got "novalue", expected key=value pairs separated by commas$/,
    );
    expect(() => loadEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(
      /^OTEL_EXPORTER_OTLP_ENDPOINT: got "collector:4318", expected an http\(s\) URL$/,
    );
  });
});
