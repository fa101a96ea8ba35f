export type * from "./database.ts";
export {
  kyselyOver,
  POSTGRES_TYPES,
  PostgresJsDialect,
  type PostgresJsHandle,
} from "./postgres-js-dialect.ts";
export { REGENERATE_COMMAND, renderDatabaseTypes } from "./render-database.ts";
