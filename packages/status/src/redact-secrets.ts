// Error texts come from upstream responses and our own messages; they should hold no secret, but the page
// is unauthenticated, so anything that looks like a credential is masked before it leaves the process.
const SECRET_PATTERNS: readonly RegExp[] = [
  /whsec_[A-Za-z0-9+/=_-]+/g,
  /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+/gi,
  /\b(client_secret|access_token|refresh_token|password|secret|token)(["']?\s*[:=]\s*["']?)[^\s"'&,;}]+/gi,
  /\/\/([^/@:\s]+):([^/@\s]+)@/g,
];

/** Masks credential-looking parts of a message and caps its length. */
export function redactSecrets(text: string | null, maxLength = 300): string | null {
  if (text === null) return null;
  let out = text;
  out = out.replace(SECRET_PATTERNS[0]!, "whsec_[redacted]");
  out = out.replace(SECRET_PATTERNS[1]!, (_m, scheme: string) => `${scheme} [redacted]`);
  out = out.replace(SECRET_PATTERNS[2]!, (_m, key: string, sep: string) => `${key}${sep}[redacted]`);
  out = out.replace(SECRET_PATTERNS[3]!, "//$1:[redacted]@");
  return out.length > maxLength ? `${out.slice(0, maxLength - 1)}…` : out;
}
