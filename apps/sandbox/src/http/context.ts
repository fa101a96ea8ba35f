import type { HttpBindings } from "@hono/node-server";
import type { Application, Connection } from "../domain/resources.ts";

/** Per-request values set by the middleware chain of the /v1 API. */
export interface ApiVariables {
  requestId: string;
  application: Application;
  /** Set by `forMerchant`: the merchant the request acts for and the application's connection to it. */
  merchantId: string;
  connection: Connection;
}

export interface ApiEnv {
  Bindings: HttpBindings;
  Variables: ApiVariables;
}
