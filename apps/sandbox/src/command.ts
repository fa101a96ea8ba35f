import { Command, InvalidArgumentError, Option } from "commander";
import { DEFAULT_WEBHOOK_SECRET, MAX_GENERATED_MERCHANTS } from "./domain/seed-constants.ts";
import type { Faults } from "./faults.ts";
import type { Sandbox } from "./sandbox.ts";

const number =
  (what: string, { min = 0, max = Number.POSITIVE_INFINITY, integer = false } = {}) =>
  (raw: string): number => {
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      throw new InvalidArgumentError(`expected ${what}, got "${raw}"`);
    }
    return n;
  };
const rate = number("a rate from 0 to 1", { max: 1 });
const ms = number("milliseconds, 0 or more", { integer: true });
const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

interface SandboxFlags {
  port: number;
  host: string;
  seedFile?: string;
  merchants?: number;
  timeScale: number;
  randomSeed: number;
  webhookUrl?: string[];
  webhookSecret?: string[];
  webhookTypes?: string;
  generateRate: number;
  advanceEveryMs: number;
  faultSeed?: number;
  dropRate?: number;
  duplicateRate?: number;
  reorderWindowMs?: number;
  webhookDelayMs?: number;
  rateLimitRate?: number;
  retryAfter?: number;
  errorRate?: number;
  slowRate?: number;
  slowMs?: number;
  resetRate?: number;
  tokenTtl?: number;
  clockSkew?: number;
}

function faultsFrom(f: SandboxFlags): Partial<Faults> {
  const pairs: [keyof Faults, number | undefined][] = [
    ["seed", f.faultSeed],
    ["webhookDropRate", f.dropRate],
    ["webhookDuplicateRate", f.duplicateRate],
    ["webhookReorderWindowMs", f.reorderWindowMs],
    ["webhookDelayMs", f.webhookDelayMs],
    ["api429Rate", f.rateLimitRate],
    ["api429RetryAfterSeconds", f.retryAfter],
    ["api5xxRate", f.errorRate],
    ["apiSlowRate", f.slowRate],
    ["apiSlowMs", f.slowMs],
    ["apiResetRate", f.resetRate],
    ["tokenTtlSeconds", f.tokenTtl],
    ["clockSkewSeconds", f.clockSkew],
  ];
  return Object.fromEntries(pairs.filter(([, v]) => v !== undefined));
}

/** The startup text: address and demo credentials on one line, then the environment for loops-sync. */
export function describeStartup(
  sandbox: Sandbox,
  secrets: readonly string[],
  webhookUrls: readonly string[] = [],
): string {
  const { clientId, clientSecret, applicationId } = sandbox.credentials;
  const delivery = webhookUrls.length
    ? `webhooks to ${webhookUrls.join(", ")}`
    : "no webhook endpoint (add --webhook-url http://127.0.0.1:8080/webhooks/loops)";
  return [
    `Loops sandbox listening on ${sandbox.url} (API ${sandbox.apiUrl}, token ${sandbox.authUrl}, admin ${sandbox.url}/admin); demo client ${clientId} / ${clientSecret}, application ${applicationId}, merchants ${listMerchants(sandbox.merchantIds)}; ${delivery}`,
    "Point loops-sync at it with:",
    `  LOOPS_API_URL=${sandbox.apiUrl} LOOPS_AUTH_URL=${sandbox.authUrl} LOOPS_CLIENT_ID=${clientId} LOOPS_CLIENT_SECRET=${clientSecret} LOOPS_APPLICATION_ID=${applicationId} LOOPS_WEBHOOK_SECRETS=${secrets.join(",")}`,
  ].join("\n");
}

// Thousands of generated merchants would drown the startup line.
function listMerchants(ids: readonly string[]): string {
  return ids.length <= 10 ? ids.join(" ") : `${ids[0]} … ${ids.at(-1)} (${ids.length})`;
}

/** `loops-sync sandbox`: a local Loops API with webhooks, order generator and faults. */
export function createSandboxCommand(): Command {
  return new Command("sandbox")
    .description(
      "Run a local stand-in for the Loops Partner API: token endpoint, API, signed webhooks, order generator, faults",
    )
    .addOption(
      new Option("--port <port>", "port to listen on (0: any free port)")
        .default(4010)
        .argParser(number("a port", { max: 65535, integer: true })),
    )
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option(
      "--seed-file <path>",
      "JSON seed of applications, channels, merchants, brands and locations (default: two demo merchants)",
    )
    .addOption(
      new Option(
        "--merchants <n>",
        "seed this many generated merchants (mer_t00001 …, one brand and location each) instead of the demo two",
      )
        .argParser(
          number(`a number of merchants from 1 to ${MAX_GENERATED_MERCHANTS}`, {
            min: 1,
            max: MAX_GENERATED_MERCHANTS,
            integer: true,
          }),
        )
        .conflicts("seedFile"),
    )
    .addOption(
      new Option("--time-scale <n>", "sandbox seconds per real second (3600: an hour per second)")
        .default(1)
        .argParser(number("a positive number", { min: Number.MIN_VALUE })),
    )
    .addOption(
      new Option("--random-seed <n>", "seed of generated order contents and lifecycles")
        .default(42)
        .argParser(number("an integer", { min: Number.MIN_SAFE_INTEGER, integer: true })),
    )
    .option("--webhook-url <url>", "deliver webhooks to this URL (repeatable)", collect)
    .option(
      "--webhook-secret <whsec>",
      `signing secret; repeat during rotation (default: the demo secret ${DEFAULT_WEBHOOK_SECRET})`,
      collect,
    )
    .option(
      "--webhook-types <types>",
      "comma-separated event types for --webhook-url, wildcards allowed (default: all)",
    )
    .addOption(
      new Option("--generate-rate <perSecond>", "new orders per second from the generator (0: off)")
        .default(0)
        .argParser(number("orders per second, 0 or more")),
    )
    .addOption(
      new Option("--advance-every-ms <ms>", "real ms between lifecycle steps of generated orders")
        .default(1000)
        .argParser(number("milliseconds above 0", { min: 1 })),
    )
    .addOption(
      new Option("--fault-seed <n>", "seed of the fault dice (same seed, same faults)").argParser(
        number("an integer", { min: Number.MIN_SAFE_INTEGER, integer: true }),
      ),
    )
    .addOption(
      new Option("--drop-rate <rate>", "share of webhook deliveries never sent (0-1)").argParser(rate),
    )
    .addOption(
      new Option("--duplicate-rate <rate>", "share of webhook deliveries sent twice (0-1)").argParser(rate),
    )
    .addOption(
      new Option(
        "--reorder-window-ms <ms>",
        "delay each webhook by a random 0..ms so they arrive out of order",
      ).argParser(ms),
    )
    .addOption(new Option("--webhook-delay-ms <ms>", "delay every webhook by this many ms").argParser(ms))
    .addOption(
      new Option("--rate-limit-rate <rate>", "share of API calls answered 429 rate_limited (0-1)").argParser(
        rate,
      ),
    )
    .addOption(new Option("--retry-after <seconds>", "Retry-After of those 429 answers").argParser(ms))
    .addOption(new Option("--error-rate <rate>", "share of API calls answered 503 (0-1)").argParser(rate))
    .addOption(new Option("--slow-rate <rate>", "share of API calls answered slowly (0-1)").argParser(rate))
    .addOption(new Option("--slow-ms <ms>", "how slowly (default 2000)").argParser(ms))
    .addOption(
      new Option("--reset-rate <rate>", "share of API calls whose connection is reset (0-1)").argParser(rate),
    )
    .addOption(
      new Option(
        "--token-ttl <seconds>",
        "tokens stop working after this many seconds while announcing 900",
      ).argParser(ms),
    )
    .addOption(
      new Option(
        "--clock-skew <seconds>",
        "shift the Date header of every answer by this many seconds (negative: behind), as a skewed clock would",
      ).argParser(
        number("a whole number of seconds", {
          min: Number.MIN_SAFE_INTEGER,
          integer: true,
        }),
      ),
    )
    .action(async (flags: SandboxFlags) => {
      // Loaded here, not above: `loops-sync --help` and the other verbs build this command too.
      const { startSandbox } = await import("./sandbox.ts");
      const { loadSeedFile } = await import("./domain/seed.ts");
      const { manyMerchantsSeed } = await import("./domain/many-merchants-seed.ts");
      const secrets = flags.webhookSecret ?? [DEFAULT_WEBHOOK_SECRET];
      const types = flags.webhookTypes
        ?.split(",")
        .map((t) => t.trim())
        .filter(Boolean);
      const sandbox = await startSandbox({
        port: flags.port,
        host: flags.host,
        timeScale: flags.timeScale,
        randomSeed: flags.randomSeed,
        faults: faultsFrom(flags),
        ...(flags.seedFile ? { seed: await loadSeedFile(flags.seedFile) } : {}),
        ...(flags.merchants ? { seed: manyMerchantsSeed(flags.merchants) } : {}),
        webhooks: (flags.webhookUrl ?? []).map((url) => ({ url, secrets, ...(types ? { types } : {}) })),
        ...(flags.generateRate > 0
          ? { generator: { ratePerSecond: flags.generateRate, advanceEveryMs: flags.advanceEveryMs } }
          : {}),
      });
      process.stdout.write(`${describeStartup(sandbox, secrets, flags.webhookUrl)}\n`);
      const stop = (): void => {
        void sandbox.close().then(() => process.exit(0));
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
}
