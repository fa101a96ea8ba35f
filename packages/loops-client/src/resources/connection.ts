import type { CallOptions } from "../call-options.ts";
import { type Connection, ConnectionSchema } from "../schemas/merchant.ts";
import { ScopedResource } from "./scoped-resource.ts";

/** GET /connection: what the merchant granted this application (status, scopes, locations). */
export class ConnectionResource extends ScopedResource {
  async get(options: CallOptions = {}): Promise<Connection> {
    return this.send({
      method: "GET",
      route: "/connection",
      path: "/connection",
      schema: ConnectionSchema,
      signal: options.signal,
    });
  }
}
