import { describe, expect, it } from "vitest";
import { redactSecrets } from "./redact-secrets.ts";

describe("redactSecrets", () => {
  it("masks webhook secrets, bearer tokens, key=value secrets and URL passwords", () => {
    const text =
      "failed with whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw, Authorization: Bearer eyJ.abc.def, " +
      'client_secret=s3cr3t&x=1 {"access_token": "tok123"} postgres://app:pa55@db:5432/x';
    const out = redactSecrets(text)!;
    for (const secret of ["MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "eyJ.abc.def", "s3cr3t", "tok123", "pa55"]) {
      expect(out).not.toContain(secret);
    }
    expect(out).toContain("whsec_[redacted]");
    expect(out).toContain("Bearer [redacted]");
    expect(out).toContain("client_secret=[redacted]&x=1");
    expect(out).toContain("postgres://app:[redacted]@db:5432/x");
  });

  it("keeps ordinary text, passes null through and caps the length", () => {
    expect(redactSecrets("order ord_1 not found (404)")).toBe("order ord_1 not found (404)");
    expect(redactSecrets(null)).toBeNull();
    const long = redactSecrets("x".repeat(1000), 50)!;
    expect(long).toHaveLength(50);
    expect(long.endsWith("…")).toBe(true);
  });
});
