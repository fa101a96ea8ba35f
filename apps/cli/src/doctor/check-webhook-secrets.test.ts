import { describe, expect, it } from "vitest";
import { checkWebhookSecrets } from "./check-webhook-secrets.ts";

const key = (bytes: number, fill = 1) => `whsec_${Buffer.alloc(bytes, fill).toString("base64")}`;

describe("checkWebhookSecrets", () => {
  it("passes one well-formed secret and counts a rotation's two", () => {
    expect(checkWebhookSecrets([key(32)])).toMatchObject({
      status: "ok",
      detail: "1 webhook secret, well formed",
    });
    const rotation = checkWebhookSecrets([key(32, 1), key(32, 2)]);
    expect(rotation).toMatchObject({
      status: "ok",
      detail: expect.stringMatching(/^2 webhook secrets.*rotation/),
    });
    expect(rotation.fix).toMatch(/remove the old one/);
  });

  it("fails a secret the receiver would refuse at start, naming its position and never its value", () => {
    const secret = "whsec_abc=def";
    const r = checkWebhookSecrets([key(32), secret]);
    expect(r).toMatchObject({ status: "fail", area: "environment" });
    expect(r.detail).toMatch(/webhook secret #2 \(13 characters, hidden\) is not whsec_ followed by base64/);
    expect(JSON.stringify(r)).not.toContain("abc=def");
  });

  it("warns about a secret shorter than a real key, and one listed twice", () => {
    expect(checkWebhookSecrets([key(10)])).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/#1 decodes to 10 bytes/),
    });
    expect(checkWebhookSecrets([key(32), key(32)])).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/same secret twice/),
    });
  });
});
