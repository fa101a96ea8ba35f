import type { HttpBindings } from "@hono/node-server";

/** The receiver app's Hono environment: node-server's bindings, absent under `app.request()` in tests. */
export interface ReceiverEnv {
  Bindings: Partial<HttpBindings>;
}
