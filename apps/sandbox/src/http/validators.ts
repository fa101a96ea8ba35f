import { z } from "zod";

/** Field formats shared by the write endpoints, as the spec states them. */

export const externalRef = z
  .string()
  .min(1, "must be 1-64 characters")
  .max(64, "must be 1-64 characters")
  .regex(/^[A-Za-z0-9\-_.:;]+$/, "may contain letters, digits and - _ . : ; only");

const nameText = z.string().min(1, "must be 1-120 characters").max(120, "must be 1-120 characters");
/** Localized text where both languages are required. */
export const bothLanguages = z.object({ en: nameText, ar: nameText });
export const optionalLanguages = z.object({
  en: z.string().max(2000).nullable().optional(),
  ar: z.string().max(2000).nullable().optional(),
});

export const e164 = z
  .string()
  .regex(/^\+[1-9][0-9]{6,14}$/, "must be an E.164 phone number like +966500000000");
export const email = z.email("must be an email address");

export const httpsImage = z
  .url({ protocol: /^https$/, error: "must be a public HTTPS URL" })
  .regex(/\.(jpe?g|png)(\?.*)?$/i, "must point at a JPG or PNG image");

const hhmm = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, "must be HH:MM");
const ranges = z.array(z.object({ opens: hhmm, closes: hhmm }));
export const openingHours = z.object({
  sunday: ranges,
  monday: ranges,
  tuesday: ranges,
  wednesday: ranges,
  thursday: ranges,
  friday: ranges,
  saturday: ranges,
});

export const timezone = z.string().refine((tz) => {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}, "must be an IANA time zone like Asia/Riyadh");

export const address = z.object({
  line1: z.string().min(1),
  district: z.string().nullable().optional(),
  city: z.string().min(1),
  postal_code: z.string().nullable().optional(),
  country: z.string().length(2).default("SA"),
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
});
