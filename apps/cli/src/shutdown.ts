/** Resolves on the first SIGINT or SIGTERM (or after `timeoutMs`, when given), then stops listening. */
export function untilSignal(timeoutMs?: number): Promise<"signal" | "timeout"> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (why: "signal" | "timeout") => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      if (timer) clearTimeout(timer);
      resolve(why);
    };
    const onSignal = () => done("signal");
    process.once("SIGINT", onSignal);
    process.once("SIGTERM", onSignal);
    if (timeoutMs !== undefined) timer = setTimeout(() => done("timeout"), timeoutMs);
  });
}
