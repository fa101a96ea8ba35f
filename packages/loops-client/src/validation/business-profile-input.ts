import { z } from "zod";
import { LoopsError } from "../errors.ts";
import { DOCUMENT_TYPES } from "../schemas/business-profile.ts";

const text = (what: string) => z.string({ error: `expected ${what}` }).min(1, `expected ${what}`);
const digits = (n: number) =>
  z
    .string({ error: `expected ${n} digits` })
    .regex(new RegExp(`^[0-9]{${n}}$`), `expected exactly ${n} digits`);

export const BusinessProfileDetailsInput = z.looseObject({
  legal_name: text("the legal name as on the commercial registration"),
  cr_number: digits(10),
  vat_number: z
    .string({ error: "expected 15 digits" })
    .regex(/^3[0-9]{13}3$/, "expected 15 digits starting and ending with 3"),
  national_address: z.looseObject(
    {
      building_number: digits(4),
      street: text("a street"),
      district: text("a district"),
      city: text("a city"),
      postal_code: digits(5),
      additional_number: digits(4),
    },
    { error: "expected the national address object" },
  ),
});
export type BusinessProfileDetailsParams = z.input<typeof BusinessProfileDetailsInput>;

/** Documents over this size are refused upstream: "4 MB", read as 4,000,000 bytes (the safe reading). */
export const MAX_DOCUMENT_BYTES = 4_000_000;

export interface DocumentUploadParams {
  type: (typeof DOCUMENT_TYPES)[number];
  /** The file's bytes: PDF, JPG or PNG. */
  file: Blob | Uint8Array | ArrayBuffer;
  /** Name sent with the file. Default: `<type>.<pdf|jpg|png>`. */
  fileName?: string;
}

const MEDIA_TYPES = [
  { type: "application/pdf", ext: "pdf", magic: [0x25, 0x50, 0x44, 0x46] }, // %PDF
  { type: "image/jpeg", ext: "jpg", magic: [0xff, 0xd8, 0xff] },
  { type: "image/png", ext: "png", magic: [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a] },
] as const;

/**
 * Checks type, size and format before uploading, and builds the multipart body. The format is
 * read from the file's first bytes, not its name, so a renamed file is caught here, not upstream.
 */
export async function buildDocumentForm(params: DocumentUploadParams): Promise<FormData> {
  if (!params || typeof params !== "object") throw LoopsError.invalidArgument("", "expected { type, file }");
  if (!(DOCUMENT_TYPES as readonly string[]).includes(params.type)) {
    throw LoopsError.invalidArgument("type", `expected one of ${DOCUMENT_TYPES.join(", ")}`);
  }
  const blob = toBlob(params.file);
  if (!blob) throw LoopsError.invalidArgument("file", "expected a Blob, Uint8Array or ArrayBuffer");
  if (blob.size === 0) throw LoopsError.invalidArgument("file", "the file is empty");
  if (blob.size > MAX_DOCUMENT_BYTES) {
    throw LoopsError.invalidArgument(
      "file",
      `the file is ${blob.size} bytes; the limit is 4 MB (${MAX_DOCUMENT_BYTES})`,
    );
  }
  const head = new Uint8Array(await blob.slice(0, 8).arrayBuffer());
  const media = MEDIA_TYPES.find((m) => m.magic.every((byte, i) => head[i] === byte));
  if (!media) throw LoopsError.invalidArgument("file", "expected a PDF, JPG or PNG file");
  if (
    params.fileName !== undefined &&
    (typeof params.fileName !== "string" || params.fileName.trim() === "")
  ) {
    throw LoopsError.invalidArgument("fileName", "expected a non-empty file name");
  }
  const form = new FormData();
  form.set("type", params.type);
  form.set("file", new Blob([blob], { type: media.type }), params.fileName ?? `${params.type}.${media.ext}`);
  return form;
}

function toBlob(file: unknown): Blob | undefined {
  if (file instanceof Blob) return file;
  if (file instanceof Uint8Array) return new Blob([file as Uint8Array<ArrayBuffer>]);
  if (file instanceof ArrayBuffer) return new Blob([file]);
  return undefined;
}
