import { Webhook } from "standardwebhooks";
import { invalidRequest } from "../problem.ts";

export interface WebhookEndpointInput {
  url: string;
  /** Signing secrets (`whsec_…`); more than one during rotation, each signs every request. */
  secrets: string[];
  /** Event types, wildcards like `order.*` allowed. Default: every type. */
  types?: string[];
  /** Application whose events it receives. Default: the seed's first application. */
  applicationId?: string;
}

export interface WebhookEndpoint {
  id: string;
  applicationId: string;
  url: string;
  secrets: string[];
  types: string[] | undefined;
  enabled: boolean;
  /** Sandbox ms of the first failure in the current unbroken run of failures. */
  failingSince: number | null;
  disabledAt: string | null;
  createdAt: string;
}

/** Checks endpoint settings; throws ProblemError(invalid_request) naming each bad field. */
export function validateEndpointInput(input: Partial<WebhookEndpointInput>, partial = false): void {
  const errors: { field: string; message: string }[] = [];
  if (input.url !== undefined || !partial) {
    try {
      const u = new URL(String(input.url));
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("protocol");
    } catch {
      errors.push({ field: "url", message: "must be an http(s) URL" });
    }
  }
  if (input.secrets !== undefined || !partial) {
    if (!Array.isArray(input.secrets) || input.secrets.length === 0) {
      errors.push({ field: "secrets", message: "must be a non-empty array of whsec_… secrets" });
    } else {
      input.secrets.forEach((s, i) => {
        let ok = typeof s === "string" && /^whsec_[A-Za-z0-9+/=]+$/.test(s);
        if (ok) {
          try {
            new Webhook(s);
          } catch {
            ok = false;
          }
        }
        // Never echo the secret itself.
        if (!ok) errors.push({ field: `secrets[${i}]`, message: "must be whsec_ followed by base64" });
      });
    }
  }
  if (
    input.types !== undefined &&
    (!Array.isArray(input.types) || input.types.some((t) => typeof t !== "string" || !t))
  ) {
    errors.push({ field: "types", message: "must be an array of event types" });
  }
  if (errors.length) throw invalidRequest(errors);
}

/** What the admin API shows of an endpoint: everything but the secrets, of which only the count. */
export function describeEndpoint(e: WebhookEndpoint): Record<string, unknown> {
  return {
    id: e.id,
    application_id: e.applicationId,
    url: e.url,
    types: e.types ?? ["*"],
    secret_count: e.secrets.length,
    enabled: e.enabled,
    failing_since: e.failingSince === null ? null : new Date(e.failingSince).toISOString(),
    disabled_at: e.disabledAt,
    created_at: e.createdAt,
  };
}
