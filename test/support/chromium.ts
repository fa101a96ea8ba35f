import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium (`apt-get install -y chromium`; .ci/run installs it). */
export const CHROMIUM = "/usr/bin/chromium";

/** Browser tests are skipped only off CI when Chromium is absent; CI never skips them. */
export const skipWithoutChromium = !existsSync(CHROMIUM) && !process.env.CI;

/** Headless Chromium with the flags that keep it off the (closed) network of these machines. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
