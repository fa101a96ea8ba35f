// Finds the loopback URLs a health-check command calls, so their port and path can be compared with
// the receiver's PORT and routes. `${PORT:-8080}` (a shell default) counts as port 8080.

export interface HealthUrl {
  port: number;
  path: string;
}

const URL_PATTERN = /https?:\/\/(?:127\.0\.0\.1|localhost|\[::1\]):(?:\$\{PORT:-(\d+)\}|(\d+))(\/[\w./-]*)/g;

/** Every loopback URL in a command line (shell string or the joined words of an exec form). */
export function healthUrlsIn(command: string): HealthUrl[] {
  return [...command.matchAll(URL_PATTERN)].map((m) => ({
    port: Number(m[1] ?? m[2]),
    path: m[3]!,
  }));
}
