import { Hono } from "hono";
import { z } from "zod";
import type { BusinessProfile } from "../domain/resources.ts";
import { forMerchant } from "../http/auth.ts";
import { parseJsonBody } from "../http/body.ts";
import type { ApiEnv } from "../http/context.ts";
import { invalidRequest, ProblemError } from "../problem.ts";
import type { SandboxServices } from "../services.ts";

const DOCUMENT_TYPES = [
  "commercial_registration",
  "vat_certificate",
  "national_address_certificate",
  "iban_certificate",
  "owner_id",
] as const;
const FILE_TYPES: Record<string, string> = {
  "application/pdf": "pdf",
  "image/jpeg": "jpg",
  "image/png": "png",
};
/** The spec's "4 MB" per document, read as 4,000,000 bytes like the client does. */
export const MAX_DOCUMENT_BYTES = 4_000_000;
export const DOCUMENTS_PATH = "/merchant/business-profile/documents";

/** The spec's refusal of a file it will not take: too large, empty, or not a PDF, JPG or PNG. */
export const invalidFile = () =>
  new ProblemError(400, "invalid_file", { detail: "the file must be a PDF, JPG or PNG of at most 4 MB" });

const detailsBody = z.object({
  legal_name: z.string().min(1),
  cr_number: z.string().regex(/^[0-9]{10}$/, "must be 10 digits"),
  vat_number: z.string().regex(/^3[0-9]{13}3$/, "must be 15 digits starting and ending with 3"),
  national_address: z.object({
    building_number: z.string().regex(/^[0-9]{4}$/, "must be 4 digits"),
    street: z.string().min(1),
    district: z.string().min(1),
    city: z.string().min(1),
    postal_code: z.string().regex(/^[0-9]{5}$/, "must be 5 digits"),
    additional_number: z.string().regex(/^[0-9]{4}$/, "must be 4 digits"),
  }),
});

const locked = (profile: BusinessProfile): void => {
  if (profile.status === "in_review" || profile.status === "approved") {
    throw new ProblemError(409, "business_profile_locked", {
      detail: `the business profile is ${profile.status}; it can change only while draft or rejected`,
    });
  }
};

/** PUT /merchant/business-profile, POST /merchant/business-profile/documents, POST /merchant/business-profile/submit. */
export function businessProfileRoutes({
  store,
  ids,
  clock,
  idempotency,
  reviewer,
}: SandboxServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const write = forMerchant({ store, scope: "business_profile:write" });
  const profileOf = (merchantId: string): BusinessProfile => store.profiles.get(merchantId)!;

  app.put("/merchant/business-profile", write, async (c) => {
    const profile = profileOf(c.get("merchantId"));
    locked(profile);
    profile.details = await parseJsonBody(c, detailsBody);
    return c.json(profile);
  });

  app.post(DOCUMENTS_PATH, write, idempotency.middleware(), async (c) => {
    const profile = profileOf(c.get("merchantId"));
    locked(profile);
    if (!(c.req.header("content-type") ?? "").startsWith("multipart/form-data")) {
      throw invalidRequest([{ field: "content-type", message: "must be multipart/form-data" }]);
    }
    if (Number(c.req.header("content-length") ?? 0) > MAX_DOCUMENT_BYTES + 64 * 1024) throw invalidFile();
    const form = await c.req.formData();
    const type = form.get("type");
    const file = form.get("file");
    if (typeof type !== "string" || !(DOCUMENT_TYPES as readonly string[]).includes(type)) {
      throw invalidRequest([{ field: "type", message: `must be one of ${DOCUMENT_TYPES.join(", ")}` }]);
    }
    if (!(file instanceof File)) throw invalidRequest([{ field: "file", message: "is required" }]);
    if (!FILE_TYPES[file.type] || file.size === 0 || file.size > MAX_DOCUMENT_BYTES) throw invalidFile();
    const document = {
      id: ids.next("doc"),
      type,
      status: "pending" as const,
      file_name: file.name || `${type}.${FILE_TYPES[file.type]}`,
      rejection_reason: null,
      uploaded_at: clock.iso(),
    };
    profile.documents = [...profile.documents.filter((d) => d.type !== type), document];
    return c.json(document, 201);
  });

  app.post("/merchant/business-profile/submit", write, idempotency.middleware(), (c) => {
    const profile = profileOf(c.get("merchantId"));
    locked(profile);
    const missing: { field: string; message: string }[] = [];
    if (!profile.details)
      missing.push({
        field: "details",
        message: "legal_name, cr_number, vat_number and national_address are missing",
      });
    for (const type of profile.required_documents) {
      if (!profile.documents.some((d) => d.type === type))
        missing.push({ field: `documents.${type}`, message: "is required before submitting" });
    }
    if (missing.length)
      throw invalidRequest(missing, `cannot submit: ${missing.map((m) => m.field).join(", ")} missing`);
    profile.status = "in_review";
    profile.review = { submitted_at: clock.iso(), reviewed_at: null, notes: null };
    const merchant = store.merchants.get(profile.merchant_id);
    if (merchant) merchant.business_profile_status = "in_review";
    reviewer.submitted(profile);
    return c.json(profile);
  });

  return app;
}
