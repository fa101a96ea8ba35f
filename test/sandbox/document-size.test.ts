// The sandbox's document upload refuses what the spec refuses, with the spec's code: a file over 4 MB (10^6
// bytes a MB) is `invalid_file`, whether the route's size check or the API's body limit sees it first.
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiAs, getToken } from "../support/sandbox-api.ts";

const MB = 1_000_000;

describe("sandbox POST /merchant/business-profile/documents", () => {
  let sandbox: Sandbox;
  let upload: (
    body: FormData | ReadableStream<Uint8Array>,
    headers?: Record<string, string>,
  ) => Promise<{ status: number; code?: string }>;

  beforeAll(async () => {
    sandbox = await startSandbox({});
    const token = await getToken(sandbox);
    const made = await apiAs(
      sandbox,
      token,
      null,
    )<{ id: string }>("/merchants", {
      method: "POST",
      body: {
        external_ref: "doc-size-1",
        name: { en: "Docs", ar: "دوك" },
        owner: { name: "O", email: "docs@example.com", phone: "+966500000009" },
      },
    });
    upload = async (body, headers = {}) => {
      const r = await fetch(`${sandbox.apiUrl}/merchant/business-profile/documents`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "service-merchant-id": made.body.id, ...headers },
        body,
        duplex: "half",
      } as RequestInit);
      const text = await r.text();
      return { status: r.status, code: text ? (JSON.parse(text) as { code?: string }).code : undefined };
    };
  });
  afterAll(() => sandbox?.close());

  const pdf = (bytes: number) => {
    const form = new FormData();
    form.set("type", "commercial_registration");
    form.set("file", new File([Buffer.alloc(bytes, 0x25)], "cr.pdf", { type: "application/pdf" }));
    return form;
  };

  it("takes a PDF of exactly 4 MB", async () => {
    expect(await upload(pdf(4 * MB))).toEqual({ status: 201, code: undefined });
  });

  it("refuses a PDF one byte over 4 MB as invalid_file", async () => {
    expect(await upload(pdf(4 * MB + 1))).toEqual({ status: 400, code: "invalid_file" });
  });

  it("refuses a 5 MiB PDF as invalid_file, not as the body limit's invalid_request", async () => {
    expect(await upload(pdf(5 * 1024 * 1024))).toEqual({ status: 400, code: "invalid_file" });
  });

  it("cuts off a body far over any limit, sent without a length, with invalid_file", async () => {
    const form = new Response(pdf(12 * MB));
    const type = form.headers.get("content-type")!;
    // A stream: no Content-Length, so only the body limit's count can stop it.
    expect(await upload(form.body!, { "content-type": type })).toEqual({ status: 400, code: "invalid_file" });
  });
});
