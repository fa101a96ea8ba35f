export {
  ConfigError,
  ENV_VARIABLES,
  type Env,
  type LoadEnvOptions,
  loadEnv,
  type RequiredVariable,
} from "./env.ts";
export { type CreateLoggerOptions, createLogger, type Logger, maskUrl, REDACT_PATHS } from "./logger.ts";
export { createStopStack, type Stop, type StopFailure, type StopStack } from "./stop-stack.ts";
export { version } from "./version.ts";
