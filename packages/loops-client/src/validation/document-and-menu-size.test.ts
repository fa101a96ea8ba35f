import { describe, expect, it } from "vitest";
import { LoopsError } from "../errors.ts";
import { buildDocumentForm, MAX_DOCUMENT_BYTES } from "./business-profile-input.ts";
import { checkMenuSize, MAX_MENU_BYTES } from "./menu-input.ts";

const pdf = (size: number) => {
  const bytes = new Uint8Array(size);
  bytes.set([0x25, 0x50, 0x44, 0x46]);
  return bytes;
};

async function fieldOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LoopsError);
  expect((error as LoopsError).kind).toBe("invalid");
  return (error as LoopsError).field;
}

describe("document upload checks", () => {
  it("accepts a PDF of exactly 4 MB and labels JPG and PNG by their bytes", async () => {
    const form = await buildDocumentForm({ type: "vat_certificate", file: pdf(MAX_DOCUMENT_BYTES) });
    const file = form.get("file") as File;
    expect(file.size).toBe(MAX_DOCUMENT_BYTES);
    expect(file.type).toBe("application/pdf");
    expect(file.name).toBe("vat_certificate.pdf");
    const jpg = await buildDocumentForm({
      type: "owner_id",
      file: new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0]).buffer,
    });
    expect((jpg.get("file") as File).type).toBe("image/jpeg");
    const png = new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0])]);
    expect(((await buildDocumentForm({ type: "owner_id", file: png })).get("file") as File).type).toBe(
      "image/png",
    );
  });

  it("refuses a file over 4 MB", async () => {
    expect(
      await fieldOf(buildDocumentForm({ type: "vat_certificate", file: pdf(MAX_DOCUMENT_BYTES + 1) })),
    ).toBe("file");
  });

  it("refuses a format other than PDF, JPG or PNG, whatever its name", async () => {
    const gif = new TextEncoder().encode("GIF89a....");
    expect(await fieldOf(buildDocumentForm({ type: "owner_id", file: gif, fileName: "id.png" }))).toBe(
      "file",
    );
  });

  it("refuses an empty file, an unknown type and a blank name", async () => {
    expect(await fieldOf(buildDocumentForm({ type: "owner_id", file: new Uint8Array() }))).toBe("file");
    // @ts-expect-error an unknown document type is what is being tested
    expect(await fieldOf(buildDocumentForm({ type: "passport", file: pdf(10) }))).toBe("type");
    expect(await fieldOf(buildDocumentForm({ type: "owner_id", file: pdf(10), fileName: " " }))).toBe(
      "fileName",
    );
  });
});

describe("menu body size", () => {
  it("accepts 5 MB of JSON and refuses one byte more", () => {
    const filler = (bytes: number) => ({ x: "a".repeat(bytes - '{"x":""}'.length) });
    expect(() => checkMenuSize(filler(MAX_MENU_BYTES))).not.toThrow();
    expect(() => checkMenuSize(filler(MAX_MENU_BYTES + 1))).toThrow(/limit is 5 MB/);
  });

  it("counts bytes, not characters", () => {
    const arabic = { x: "ك".repeat(MAX_MENU_BYTES / 2) }; // two bytes each in UTF-8
    expect(() => checkMenuSize(arabic)).toThrow(LoopsError);
  });
});
