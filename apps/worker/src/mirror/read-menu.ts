import type { CallOptions, SyncMerchantApi } from "@loops-sync/loops-client";
import { LoopsError } from "@loops-sync/loops-client";
import { classifyUpstreamFailure, type MenuInput } from "@loops-sync/replica";

export function invalidResponse(message: string): LoopsError {
  return new LoopsError({ kind: "bad_response", code: "invalid_response", message });
}

/** GET /brands/{id}/menu, checked; undefined when the brand has no menu yet (404). */
export async function readMenu(
  api: SyncMerchantApi,
  brandId: string,
  options: CallOptions,
): Promise<MenuInput | undefined> {
  let read: Partial<MenuInput> | null;
  try {
    read = (await api.menus.get(brandId, options)) as Partial<MenuInput> | null;
  } catch (error) {
    const failure = classifyUpstreamFailure(error);
    if (failure.kind === "permanent" && failure.status === 404) return undefined;
    throw error;
  }
  if (!read || read.brand_id !== brandId || !Number.isSafeInteger(read.version)) {
    throw invalidResponse(`GET /brands/${brandId}/menu answered a body without its brand_id and version`);
  }
  return read as MenuInput;
}

/** GET /brands/{id}, checked. */
export async function readBrand(
  api: SyncMerchantApi,
  brandId: string,
  options: CallOptions,
): Promise<{ id: string; updated_at?: string | null }> {
  const brand = (await api.brands.get(brandId, options)) as { id?: unknown } | null;
  if (brand?.id !== brandId) throw invalidResponse(`GET /brands/${brandId} answered another brand`);
  return brand as { id: string };
}
