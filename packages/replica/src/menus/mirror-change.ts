/**
 * A change one of the whole-mirror writers committed (brand, menu, job): what the change feed records, less
 * how it came (`source`, `eventId`), which the caller knows. Shaped like `ChangeInput`'s fields.
 */
export interface MirrorChange {
  resource: "brand" | "menu" | "job";
  resourceId: string;
  merchantId: string;
  operation: "insert" | "update";
  version?: number | null;
  previousVersion?: number | null;
  status?: string | null;
  previousStatus?: string | null;
}
