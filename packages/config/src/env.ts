import { CHANGE_RESOURCES } from "@loops-sync/schema";
import { parseCrontab } from "graphile-worker";
import { z } from "zod";

/** A configuration problem, reported as one line naming the variable, what it got and what it expects. */
export class ConfigError extends Error {
  readonly code = "invalid_config";
  readonly variable: string;
  constructor(variable: string, message: string) {
    super(message);
    this.name = "ConfigError";
    this.variable = variable;
  }
}

const SECRET_VARIABLES = new Set([
  "LOOPS_CLIENT_SECRET",
  "LOOPS_WEBHOOK_SECRETS",
  "DATABASE_URL",
  "ADMIN_TOKEN",
  "GATEWAY_TOKEN",
  // A forwarding URL may carry a token in its query or credentials.
  "FORWARD_URL",
  "FORWARD_SECRET",
]);

/** What FORWARD_RESOURCES may name (replica.changes.resource). */
const FORWARD_RESOURCE_NAMES = CHANGE_RESOURCES;

const list = (raw: string | undefined): string[] =>
  (raw ?? "")
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

const httpUrl = z.url({ protocol: /^https?$/, error: "an http(s) URL" });
const port = z.coerce
  .number({ error: "a whole number" })
  .int("a whole number")
  .min(0, "a port from 0 to 65535")
  .max(65535, "a port from 0 to 65535");
const positiveInt = z.coerce
  .number({ error: "a whole number" })
  .int("a whole number")
  .positive("a number above 0");
const hostname = z
  .string()
  .regex(
    /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/,
  );

/** A five-field cron schedule as graphile-worker's crontab parser reads it (minute hour day month weekday). */
const cron = z
  .string()
  .min(1)
  .refine((value) => isCronSchedule(value), {
    error: 'a cron schedule of 5 fields like "*/5 * * * *" (minute hour day-of-month month day-of-week)',
  });

function isCronSchedule(value: string): boolean {
  const fields = value.trim().split(/\s+/);
  if (fields.length !== 5) return false;
  try {
    parseCrontab(`${fields.join(" ")} check`);
    return true;
  } catch {
    return false;
  }
}

const bool = z
  .enum(["true", "false", "1", "0", "yes", "no"], { error: "true or false" })
  .transform((v) => ["true", "1", "yes"].includes(v));

const schema = z.object({
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "a postgres:// connection URL")
    .refine((value) => URL.canParse(value), { error: "a postgres:// connection URL" })
    .optional(),
  LOOPS_API_URL: httpUrl.optional(),
  LOOPS_AUTH_URL: httpUrl.optional(),
  LOOPS_CLIENT_ID: z.string().min(1).optional(),
  LOOPS_CLIENT_SECRET: z.string().min(1).optional(),
  LOOPS_APPLICATION_ID: z.string().min(1).optional(),
  LOOPS_WEBHOOK_SECRETS: z
    .string()
    .optional()
    .transform(list)
    .pipe(
      z.array(z.string().regex(/^whsec_[A-Za-z0-9+/=]+$/, "whsec_… values separated by spaces or commas")),
    ),
  LOOPS_MERCHANT_IDS: z
    .string()
    .optional()
    .transform(list)
    .pipe(
      z.array(z.string().regex(/^mer_[A-Za-z0-9_-]+$/, "merchant IDs (mer_…) separated by spaces or commas")),
    ),
  PORT: port.default(8080),
  HOST: z.union([z.ipv4(), z.ipv6(), hostname], { error: "an IP address or a host name" }).default("0.0.0.0"),
  LOG_LEVEL: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
  LOOPS_SYNC_MIGRATE_ON_START: bool.default(false),
  LOOPS_SYNC_EMBEDDED_POSTGRES: bool.default(true),
  LOOPS_SYNC_DATA_DIR: z.string().min(1).default(".data"),
  WEBHOOK_TOLERANCE_SECONDS: positiveInt.default(300),
  WEBHOOK_MAX_BODY_BYTES: positiveInt.default(256 * 1024),
  WEBHOOK_MAX_ID_LENGTH: positiveInt.default(255),
  WEBHOOK_MAX_JSON_DEPTH: positiveInt.default(64),
  DATABASE_POOL_SIZE: positiveInt.default(10),
  WORKER_CONCURRENCY: positiveInt.default(8),
  CATCHUP_CRON: cron.default("*/5 * * * *"),
  RECONCILE_CRON: cron.default("*/15 * * * *"),
  REVOKED_PROBE_CRON: cron.default("41 * * * *"),
  /** Requests per second to Loops for every process of the deployment together (held in Postgres). */
  LOOPS_MAX_RPS: positiveInt.default(25),
  /** Share of LOOPS_MAX_RPS background work (reconcile, catch-up, backfill, verify) may fill; live fetches keep the rest. */
  RECONCILE_BUDGET_SHARE: z.coerce
    .number({ error: "a number from 0.05 to 0.9" })
    .min(0.05, "a number from 0.05 to 0.9")
    .max(0.9, "a number from 0.05 to 0.9")
    .default(0.5),
  RETENTION_DAYS: positiveInt.default(35),
  STATUS_PAGE: bool.default(true),
  /** The admin listener (/metrics, /status, /healthz, /readyz); unset falls back to METRICS_PORT, then 9091. */
  ADMIN_PORT: port.optional(),
  /** Deprecated alias of ADMIN_PORT, read for one release. */
  METRICS_PORT: port.optional(),
  ADMIN_HOST: z.string().min(1).default("127.0.0.1"),
  ADMIN_TOKEN: z
    .string()
    .min(16, "at least 16 characters (e.g. the output of openssl rand -hex 32)")
    .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces")
    .optional(),
  /** Turns on the gateway (/loops/v1/<path> on the receiver's admin listener): the backend's bearer token. */
  GATEWAY_TOKEN: z
    .string()
    .min(16, "at least 16 characters (e.g. the output of openssl rand -hex 32)")
    .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces")
    .optional(),
  /** Longest wait of a gateway write for room in the request budget before 429 rate_limited. */
  GATEWAY_WAIT_MS: z.coerce
    .number({ error: "a whole number of milliseconds" })
    .int("a whole number of milliseconds")
    .min(0, "0 or more milliseconds")
    .max(60_000, "at most 60000 ms (a backend's call should not hang longer)")
    .default(2000),
  HEALTH_DATABASE_GRACE_SECONDS: positiveInt.default(60),
  CONFIRM_WITHIN_SECONDS: positiveInt.default(300),
  PAUSE_PROBE_FIRST_SECONDS: positiveInt.default(30),
  PAUSE_PROBE_MAX_SECONDS: positiveInt.default(900),
  METRICS_MERCHANT_LABELS_MAX: z.coerce
    .number({ error: "a whole number" })
    .int("a whole number")
    .min(0, "a number of merchants, 0 or more")
    .default(100),
  FORWARD_URL: httpUrl.optional(),
  // Several secrets, space separated, during a rotation: each signs every request.
  FORWARD_SECRET: z
    .string()
    .transform((raw) => raw.trim())
    .pipe(
      z
        .string()
        .regex(
          /^whsec_[A-Za-z0-9+/]+={0,2}(\s+whsec_[A-Za-z0-9+/]+={0,2})*$/,
          "a whsec_… secret (whsec_ followed by base64), or several separated by spaces",
        ),
    )
    .optional(),
  FORWARD_RESOURCES: z
    .string()
    .optional()
    .transform(list)
    .pipe(
      z.array(z.enum(FORWARD_RESOURCE_NAMES, { error: `names among ${FORWARD_RESOURCE_NAMES.join(", ")}` })),
    ),
  FORWARD_TIMEOUT_MS: positiveInt.default(10_000),
  FORWARD_MAX_AGE_HOURS: positiveInt.default(24),
  /** Changes in flight to FORWARD_URL at once, per worker process. */
  FORWARD_MAX_IN_FLIGHT: positiveInt.max(1000, "a number from 1 to 1000").default(64),
  /** Requests per second to FORWARD_URL, every worker together (held in Postgres). Unset: no cap. */
  FORWARD_MAX_RPS: positiveInt.max(100_000, "a number from 1 to 100000").optional(),
  // OpenTelemetry's standard variables (tracing is on when an endpoint is set): see README, "Tracing".
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(["http/protobuf", "http/json"], { error: "http/protobuf or http/json (grpc is not supported)" })
    .default("http/protobuf"),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  OTEL_TRACES_SAMPLER: z
    .enum(
      [
        "always_on",
        "always_off",
        "traceidratio",
        "parentbased_always_on",
        "parentbased_always_off",
        "parentbased_traceidratio",
      ],
      { error: "always_on, always_off, traceidratio or parentbased_(always_on|always_off|traceidratio)" },
    )
    .default("parentbased_always_on"),
  OTEL_TRACES_SAMPLER_ARG: z.coerce
    .number({ error: "a ratio from 0 to 1" })
    .min(0, "a ratio from 0 to 1")
    .max(1, "a ratio from 0 to 1")
    .optional(),
  OTEL_RESOURCE_ATTRIBUTES: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const attributes: Record<string, string> = {};
      for (const pair of (raw ?? "").split(",").filter((p) => p.trim() !== "")) {
        const at = pair.indexOf("=");
        const key = pair.slice(0, Math.max(at, 0)).trim();
        if (at < 1 || key === "") {
          ctx.addIssue({ code: "custom", message: "key=value pairs separated by commas" });
          return z.NEVER;
        }
        try {
          attributes[key] = decodeURIComponent(pair.slice(at + 1).trim());
        } catch {
          ctx.addIssue({ code: "custom", message: "key=value pairs with percent-encoded values" });
          return z.NEVER;
        }
      }
      return attributes;
    }),
  OTEL_SDK_DISABLED: bool.default(false),
});

export type Env = Omit<z.output<typeof schema>, "ADMIN_PORT"> & {
  /** ADMIN_PORT, else METRICS_PORT, else 9091. */
  ADMIN_PORT: number;
};

/** Every variable loops-sync reads, in the order of the README's configuration table. */
export const ENV_VARIABLES: readonly string[] = Object.keys(schema.shape);

/** Names whose absence stops a given process; the rest have defaults or are optional. */
export type RequiredVariable =
  | "LOOPS_API_URL"
  | "LOOPS_AUTH_URL"
  | "LOOPS_CLIENT_ID"
  | "LOOPS_CLIENT_SECRET"
  | "LOOPS_APPLICATION_ID"
  | "LOOPS_WEBHOOK_SECRETS";

export interface LoadEnvOptions {
  /** Variables this process cannot run without. Default: none. */
  require?: readonly RequiredVariable[];
}

function describeValue(name: string, value: unknown): string {
  if (value === undefined) return "nothing (unset)";
  if (SECRET_VARIABLES.has(name)) return `a value of ${String(value).length} characters (hidden)`;
  return JSON.stringify(value);
}

/**
 * Reads and validates the environment once. Throws ConfigError whose message is a single line:
 * `LOOPS_API_URL: got "ftp://x", expected an http(s) URL`.
 */
export function loadEnv(source: NodeJS.ProcessEnv = process.env, options: LoadEnvOptions = {}): Env {
  const raw: Record<string, string | undefined> = {};
  for (const key of Object.keys(schema.shape)) {
    const value = source[key];
    raw[key] = value === "" ? undefined : value;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? "environment");
    const expected = issue.message.startsWith("Invalid") ? "a valid value" : issue.message;
    throw new ConfigError(name, `${name}: got ${describeValue(name, raw[name])}, expected ${expected}`);
  }
  const env: Env = { ...parsed.data, ADMIN_PORT: parsed.data.ADMIN_PORT ?? parsed.data.METRICS_PORT ?? 9091 };
  if (!env.DATABASE_URL && !env.LOOPS_SYNC_EMBEDDED_POSTGRES) {
    throw new ConfigError(
      "DATABASE_URL",
      "DATABASE_URL: got nothing (unset), expected a postgres:// connection URL (LOOPS_SYNC_EMBEDDED_POSTGRES=false turns the embedded trial database off)",
    );
  }
  if (env.FORWARD_URL && !env.FORWARD_SECRET) {
    throw new ConfigError(
      "FORWARD_SECRET",
      "FORWARD_SECRET: got nothing (unset), expected a whsec_… secret to sign what is forwarded to FORWARD_URL",
    );
  }
  for (const name of options.require ?? []) {
    const value = env[name];
    if (value === undefined || (Array.isArray(value) && value.length === 0)) {
      throw new ConfigError(
        name,
        `${name}: got nothing (unset), expected it to be set (see README, Configuration)`,
      );
    }
  }
  return env;
}
