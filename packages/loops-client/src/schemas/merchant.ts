import { z } from "zod";
import { LocalizedTextSchema } from "./common.ts";
import { openEnum } from "./open-enum.ts";

/** The access a merchant granted this application. */
export const ConnectionSchema = z.looseObject({
  id: z.string(),
  merchant_id: z.string(),
  external_ref: z.string().nullish(),
  status: openEnum("connection.status", ["active", "revoked"]),
  scopes: z.array(z.string()),
  location_ids: z.array(z.string()),
  include_future_locations: z.boolean().nullish(),
  created_at: z.string(),
});
export type Connection = z.output<typeof ConnectionSchema>;

export const BUSINESS_PROFILE_STATUSES = ["draft", "in_review", "approved", "rejected"] as const;

export const MerchantOwnerSchema = z.looseObject({
  name: z.string().nullish(),
  email: z.string().nullish(),
  phone: z.string().nullish(),
  invitation: openEnum("merchant.owner.invitation", ["sent", "accepted"]).nullish(),
});
export type MerchantOwner = z.output<typeof MerchantOwnerSchema>;

export const MerchantSchema = z.looseObject({
  id: z.string(),
  external_ref: z.string().nullish(),
  name: LocalizedTextSchema,
  status: openEnum("merchant.status", ["active", "suspended"]),
  owner: MerchantOwnerSchema.nullish(),
  business_profile_status: openEnum("merchant.business_profile_status", BUSINESS_PROFILE_STATUSES),
  created_at: z.string(),
});
export type Merchant = z.output<typeof MerchantSchema>;

export const BrandSchema = z.looseObject({
  id: z.string(),
  merchant_id: z.string(),
  external_ref: z.string().nullish(),
  name: LocalizedTextSchema,
  description: LocalizedTextSchema.nullish(),
  logo_url: z.string().nullish(),
  cover_image_url: z.string().nullish(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Brand = z.output<typeof BrandSchema>;
