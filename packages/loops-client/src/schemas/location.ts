import { z } from "zod";
import { LocalizedTextSchema } from "./common.ts";
import { openEnum } from "./open-enum.ts";

export const OpeningHoursRangeSchema = z.looseObject({ opens: z.string(), closes: z.string() });
export type OpeningHoursRange = z.output<typeof OpeningHoursRangeSchema>;

export const WEEKDAYS = [
  "sunday",
  "monday",
  "tuesday",
  "wednesday",
  "thursday",
  "friday",
  "saturday",
] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export const OpeningHoursSchema = z.record(z.string(), z.array(OpeningHoursRangeSchema));
export type OpeningHours = Record<Weekday, OpeningHoursRange[]>;

export const LocationAddressSchema = z.looseObject({
  line1: z.string().nullish(),
  district: z.string().nullish(),
  city: z.string().nullish(),
  postal_code: z.string().nullish(),
  country: z.string().nullish(),
  latitude: z.number().nullish(),
  longitude: z.number().nullish(),
});
export type LocationAddress = z.output<typeof LocationAddressSchema>;

/**
 * A location. The list/get shape and the create/update shape differ in the spec; this schema
 * accepts both (fields present in only one shape are optional).
 */
export const LocationSchema = z.looseObject({
  id: z.string(),
  merchant_id: z.string(),
  brand_id: z.string().nullish(),
  external_ref: z.string().nullish(),
  name: LocalizedTextSchema,
  status: openEnum("location.status", ["open", "closed", "paused"]).nullish(),
  timezone: z.string(),
  phone: z.string().nullish(),
  email: z.string().nullish(),
  address: LocationAddressSchema.nullish(),
  opening_hours: OpeningHoursSchema.nullish(),
  created_at: z.string().nullish(),
  updated_at: z.string().nullish(),
});
export type Location = z.output<typeof LocationSchema>;

export const ChannelConnectionSchema = z.looseObject({
  id: z.string(),
  location_id: z.string(),
  channel: z.string(),
  status: openEnum("channel_connection.status", [
    "active",
    "needs_reauthorization",
    "paused",
    "failing",
    "disconnected",
  ]),
  updated_at: z.string().nullish(),
});
export type ChannelConnection = z.output<typeof ChannelConnectionSchema>;

/** A channel catalog entry; the spec shows only its id and that capabilities exist. */
export const ChannelSchema = z.looseObject({
  id: z.string(),
  capabilities: z.unknown().optional(),
});
export type Channel = z.output<typeof ChannelSchema>;
