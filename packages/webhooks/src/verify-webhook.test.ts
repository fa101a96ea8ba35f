import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signWebhook } from "./sign-webhook.ts";
import { createWebhookVerifier, verifyWebhook } from "./verify-webhook.ts";
import { WebhookError } from "./webhook-error.ts";

// The official Standard Webhooks test vector.
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};
const OTHER_SECRET = "whsec_" + Buffer.from("another secret of 32 bytes......").toString("base64");
const now = VECTOR.timestamp;
const bytes = (s: string) => Buffer.from(s);
const vectorHeaders = (signature = VECTOR.signature) => ({
  "webhook-id": VECTOR.id,
  "webhook-timestamp": String(VECTOR.timestamp),
  "webhook-signature": signature,
});

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookError);
    return (error as WebhookError).code;
  }
  return "accepted";
}

describe("createWebhookVerifier", () => {
  const verifier = createWebhookVerifier({ secrets: [VECTOR.secret] });
  const verify = (headers: Record<string, string>, body = VECTOR.body, at = now) =>
    codeOf(() => verifier.verify({ headers, body: bytes(body), now: at }));

  it("accepts the official vector and returns its id and timestamp", () => {
    expect(verifier.verify({ headers: vectorHeaders(), body: bytes(VECTOR.body), now })).toEqual({
      id: VECTOR.id,
      timestamp: VECTOR.timestamp,
    });
    expect(signWebhook({ ...VECTOR, secrets: [VECTOR.secret] })["webhook-signature"]).toBe(VECTOR.signature);
  });

  it("refuses a tampered body, a wrong secret, and a forged id or timestamp", () => {
    expect(verify(vectorHeaders(), '{"test": 2432232315}')).toBe("no_matching_signature");
    const wrong = createWebhookVerifier({ secrets: [OTHER_SECRET] });
    expect(codeOf(() => wrong.verify({ headers: vectorHeaders(), body: bytes(VECTOR.body), now }))).toBe(
      "no_matching_signature",
    );
    expect(verify({ ...vectorHeaders(), "webhook-id": "msg_other" })).toBe("no_matching_signature");
    expect(verify({ ...vectorHeaders(), "webhook-timestamp": String(now + 1) })).toBe(
      "no_matching_signature",
    );
  });

  it("tries every secret (rotation) and every v1 entry, ignoring other versions", () => {
    const rotated = createWebhookVerifier({ secrets: [OTHER_SECRET, VECTOR.secret] });
    expect(rotated.verify({ headers: vectorHeaders(), body: bytes(VECTOR.body), now }).id).toBe(VECTOR.id);
    const several = `v1a,${VECTOR.signature.slice(3)} v2,abc v1,${Buffer.alloc(32).toString("base64")} ${VECTOR.signature}`;
    expect(verify(vectorHeaders(several))).toBe("accepted");
    // The right bytes under another version label are not a v1 signature.
    expect(verify(vectorHeaders(`v2,${VECTOR.signature.slice(3)}`))).toBe("no_matching_signature");
  });

  it("names missing headers and malformed ones", () => {
    expect(verify({})).toBe("missing_headers");
    const { "webhook-signature": _s, ...noSignature } = vectorHeaders();
    expect(() => verifier.verify({ headers: noSignature, body: bytes(VECTOR.body), now })).toThrow(
      expect.objectContaining({ detail: "missing header(s): webhook-signature", status: 401 }),
    );
    expect(verify({ ...vectorHeaders(), "webhook-timestamp": "16142653.30" })).toBe("invalid_timestamp");
    expect(verify({ ...vectorHeaders(), "webhook-timestamp": "-1614265330" })).toBe("invalid_timestamp");
    expect(verify(vectorHeaders("garbage"))).toBe("invalid_signature_header");
    expect(verify(vectorHeaders("v1,"))).toBe("invalid_signature_header");
  });

  it("accepts 300 s either way and refuses 301 s", () => {
    expect(verify(vectorHeaders(), VECTOR.body, now + 300)).toBe("accepted");
    expect(verify(vectorHeaders(), VECTOR.body, now - 300)).toBe("accepted");
    expect(verify(vectorHeaders(), VECTOR.body, now + 301)).toBe("timestamp_too_old");
    expect(verify(vectorHeaders(), VECTOR.body, now - 301)).toBe("timestamp_too_new");
    const strict = createWebhookVerifier({ secrets: [VECTOR.secret], toleranceSeconds: 10 });
    expect(
      codeOf(() => strict.verify({ headers: vectorHeaders(), body: bytes(VECTOR.body), now: now + 11 })),
    ).toBe("timestamp_too_old");
  });

  it("reads fetch Headers and never puts a secret in its errors", () => {
    const headers = new Headers(vectorHeaders());
    expect(verifyWebhook({ headers, body: bytes(VECTOR.body), now, secrets: [VECTOR.secret] }).id).toBe(
      VECTOR.id,
    );
    try {
      verifyWebhook({ headers, body: bytes("{}"), now, secrets: [VECTOR.secret] });
      expect.unreachable();
    } catch (error) {
      const text = `${(error as Error).message} ${(error as WebhookError).detail}`;
      expect(text).not.toContain(VECTOR.secret.slice(6));
    }
    expect(() => createWebhookVerifier({ secrets: ["whsec_not base64!"] })).toThrow(/hidden/);
    expect(() => createWebhookVerifier({ secrets: [] })).toThrow(/no webhook secret/);
  });
});

describe("cross-check with the standardwebhooks package", () => {
  const secrets = [OTHER_SECRET, VECTOR.secret];
  const body = JSON.stringify({ id: "evt_1", type: "order.created", data: { note: "ü 🍕" } });
  const at = new Date();

  it("we accept what standardwebhooks signs", () => {
    for (const secret of secrets) {
      const signature = new Webhook(secret).sign("evt_1", at, body);
      const headers = {
        "webhook-id": "evt_1",
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": signature,
      };
      expect(verifyWebhook({ headers, body: bytes(body), secrets }).id).toBe("evt_1");
    }
  });

  it("standardwebhooks accepts what we sign, with each of the secrets", () => {
    const headers = signWebhook({ id: "evt_1", timestamp: at, body, secrets });
    for (const secret of secrets) {
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    }
    expect(() => new Webhook(secrets[0]!).verify(body + " ", headers)).toThrow();
  });
});
