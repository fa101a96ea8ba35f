export {
  ConfigError,
  ENV_VARIABLES,
  type Env,
  type LoadEnvOptions,
  loadEnv,
  type RequiredVariable,
} from "./env.ts";
export { type CreateLoggerOptions, createLogger, type Logger, maskUrl, REDACT_PATHS } from "./logger.ts";
export { version } from "./version.ts";
