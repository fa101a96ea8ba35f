import { createHash, timingSafeEqual } from "node:crypto";

// Hashing both sides first gives equal lengths, so timingSafeEqual compares without leaking the token's length.
const digest = (value: string) => createHash("sha256").update(value).digest();

/** A check of `Authorization: Bearer <token>` in constant time; anything else (Basic, no header) is refused. */
export function bearerCheck(token: string): (authorization: string | undefined) => boolean {
  const expected = digest(token);
  return function presentsToken(authorization) {
    if (!authorization) return false;
    const space = authorization.indexOf(" ");
    if (space < 0 || authorization.slice(0, space).toLowerCase() !== "bearer") return false;
    return timingSafeEqual(digest(authorization.slice(space + 1).trim()), expected);
  };
}
