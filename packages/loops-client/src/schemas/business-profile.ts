import { z } from "zod";
import { BUSINESS_PROFILE_STATUSES } from "./merchant.ts";
import { openEnum } from "./open-enum.ts";

export const DOCUMENT_TYPES = [
  "commercial_registration",
  "vat_certificate",
  "national_address_certificate",
  "iban_certificate",
  "owner_id",
] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

export const BusinessDocumentSchema = z.looseObject({
  id: z.string(),
  type: openEnum("document.type", DOCUMENT_TYPES),
  status: openEnum("document.status", ["pending", "accepted", "rejected"]),
  file_name: z.string(),
  rejection_reason: z.string().nullish(),
  uploaded_at: z.string(),
});
export type BusinessDocument = z.output<typeof BusinessDocumentSchema>;

export const NationalAddressSchema = z.looseObject({
  building_number: z.string().nullish(),
  street: z.string().nullish(),
  district: z.string().nullish(),
  city: z.string().nullish(),
  postal_code: z.string().nullish(),
  additional_number: z.string().nullish(),
});
export type NationalAddress = z.output<typeof NationalAddressSchema>;

export const BusinessProfileSchema = z.looseObject({
  merchant_id: z.string(),
  status: openEnum("business_profile.status", BUSINESS_PROFILE_STATUSES),
  // A fresh draft may have no details yet, so the read side does not insist on them.
  details: z
    .looseObject({
      legal_name: z.string().nullish(),
      cr_number: z.string().nullish(),
      vat_number: z.string().nullish(),
      national_address: NationalAddressSchema.nullish(),
    })
    .nullish(),
  documents: z.array(BusinessDocumentSchema),
  required_documents: z.array(z.string()),
  review: z
    .looseObject({
      submitted_at: z.string().nullish(),
      reviewed_at: z.string().nullish(),
      notes: z.string().nullish(),
    })
    .nullish(),
});
export type BusinessProfile = z.output<typeof BusinessProfileSchema>;
