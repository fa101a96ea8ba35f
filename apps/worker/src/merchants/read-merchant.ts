import type { CallOptions, SyncMerchantApi } from "@loops-sync/loops-client";
import { invalidResponse } from "../mirror/read-menu.ts";
import type { ConnectionInput, MerchantInput } from "./upsert-merchant.ts";

function checkResource<T>(value: unknown, what: string, fields: string[]): T {
  const v = value as Record<string, unknown> | null;
  for (const field of fields) {
    if (typeof v?.[field] !== "string") throw invalidResponse(`${what} answer has no ${field}`);
  }
  return value as T;
}

/** GET /merchant, checked for the fields the replica keys on. */
export async function readMerchant(api: SyncMerchantApi, options: CallOptions): Promise<MerchantInput> {
  return checkResource<MerchantInput>(await api.merchant.get(options), "GET /merchant", ["id", "status"]);
}

/** GET /connection, checked for the fields the replica keys on. */
export async function readConnection(api: SyncMerchantApi, options: CallOptions): Promise<ConnectionInput> {
  return checkResource<ConnectionInput>(await api.connection.get(options), "GET /connection", [
    "id",
    "merchant_id",
    "status",
  ]);
}
