import { type Logger, type LoggerOptions, pino } from "pino";

export type { Logger };

/** Paths pino blanks out wherever they appear in a log object. */
export const REDACT_PATHS = [
  "secret",
  "*.secret",
  "clientSecret",
  "*.clientSecret",
  "client_secret",
  "*.client_secret",
  "token",
  "*.token",
  "accessToken",
  "*.accessToken",
  "access_token",
  "*.access_token",
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "webhookSecrets",
  "*.webhookSecrets",
  "databaseUrl",
  "*.databaseUrl",
  'headers["webhook-signature"]',
  '*.headers["webhook-signature"]',
];

export interface CreateLoggerOptions {
  /** Component name, added as `name` to every line. */
  name: string;
  /** Default: "info". */
  level?: LoggerOptions["level"];
  /** Default: pretty when stderr is a terminal, JSON otherwise. */
  pretty?: boolean;
  /** Where lines go. Default: stderr (stdout is a command's output). */
  destination?: NodeJS.WritableStream;
  /** Fields added to every line (the active span's `trace_id` and `span_id` when tracing is on). Default: none. */
  mixin?: () => object;
}

/** JSON logs with secrets redacted; readable lines on a terminal. */
export function createLogger({
  name,
  level = "info",
  pretty = process.stderr.isTTY === true,
  destination,
  mixin,
}: CreateLoggerOptions): Logger {
  const options: LoggerOptions = { name, level, redact: { paths: REDACT_PATHS, censor: "[redacted]" } };
  if (mixin) options.mixin = mixin;
  if (pretty && !destination) {
    return pino({
      ...options,
      transport: {
        target: "pino-pretty",
        options: { colorize: true, ignore: "pid,hostname", destination: 2 },
      },
    });
  }
  return pino(options, (destination as pino.DestinationStream | undefined) ?? pino.destination(2));
}

/** Removes credentials from a connection URL before it is shown anywhere. */
export function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "[unparseable URL]";
  }
}
