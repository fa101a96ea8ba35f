import { createHash, timingSafeEqual } from "node:crypto";
import { problemResponse } from "@loops-sync/receiver";
import type { MiddlewareHandler } from "hono";

const REALM = 'realm="loops-sync admin"';

/** The token a request presents: `Bearer <token>`, or a browser's Basic login with the token as password. */
function presentedToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [scheme, value = ""] = header.split(" ", 2);
  if (scheme?.toLowerCase() === "bearer") return value;
  if (scheme?.toLowerCase() === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon === -1 ? undefined : decoded.slice(colon + 1);
  }
  return undefined;
}

// Hashing both sides first gives equal lengths, so timingSafeEqual compares without leaking the token's length.
const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Requires `token` on every path except `open` ones. A browser gets a Basic challenge, so an operator can open
 * /status and type the token as the password (any user name); scripts send `Authorization: Bearer <token>`.
 */
export function requireAdminToken({
  token,
  open,
}: {
  token: string;
  open: readonly string[];
}): MiddlewareHandler {
  const expected = digest(token);
  return async function adminToken(c, next) {
    if (open.includes(c.req.path)) return next();
    const presented = presentedToken(c.req.header("authorization"));
    if (presented !== undefined && timingSafeEqual(digest(presented), expected)) return next();
    return problemResponse({
      status: 401,
      code: "admin_token_required",
      title: "Unauthorized",
      detail: "send Authorization: Bearer <ADMIN_TOKEN> (docs/deploy.md, Ports and exposure)",
      headers: { "www-authenticate": `Basic ${REALM}, charset="UTF-8"` },
    });
  };
}
