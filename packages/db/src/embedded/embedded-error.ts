import { DbError } from "../db-error.ts";

const USE_OTHER = "or set DATABASE_URL to a PostgreSQL server";

/** The last line of a program's output that says what went wrong, without the FATAL/ERROR prefix. */
function lastProblem(output: string): string {
  const lines = output
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
  const problem = lines.findLast((line) => /FATAL|ERROR|PANIC|error:|could not|No space/i.test(line));
  return (problem ?? lines.at(-1) ?? "no output").replace(/^.*?(FATAL|PANIC|ERROR|LOG):\s+/, "");
}

/**
 * Turns what initdb or postgres printed before exiting into one line naming the cause and the fix.
 * `dataDir` is where the cluster's files are; `port` the TCP port asked for.
 */
export function classifyStartOutput(
  output: string,
  where: { dataDir: string; port: number },
): DbError<"embedded"> {
  const { dataDir, port } = where;
  if (/No space left on device|ENOSPC|could not extend file|disk quota exceeded/i.test(output)) {
    return new DbError(
      "embedded",
      "disk-full",
      `embedded PostgreSQL: the disk holding ${dataDir} is full; free some space, set LOOPS_SYNC_DATA_DIR to a folder on another disk, ${USE_OTHER}`,
    );
  }
  if (/Address already in use|could not create any TCP\/IP sockets|could not bind/i.test(output)) {
    return new DbError(
      "embedded",
      "port-taken",
      `embedded PostgreSQL: port ${port} on 127.0.0.1 is taken by another program; stop it, choose another port, ${USE_OTHER}`,
    );
  }
  const running = /lock file "postmaster\.pid" already exists[\s\S]*?PID (\d+)/.exec(output);
  if (running) {
    return new DbError(
      "embedded",
      "already-running",
      `embedded PostgreSQL: another server (pid ${running[1]}) is running on ${dataDir}; stop it (kill ${running[1]}) and retry, ${USE_OTHER}`,
    );
  }
  if (/pre-existing shared memory block/i.test(output)) {
    return new DbError(
      "embedded",
      "already-running",
      `embedded PostgreSQL: processes of an earlier server on ${dataDir} are still running; stop them (ps -eo pid,args | grep 'postgres.*${dataDir}') and retry, ${USE_OTHER}`,
    );
  }
  if (
    /Permission denied|EACCES|EPERM|wrong ownership|must be owned by|has invalid permissions/i.test(output)
  ) {
    return new DbError(
      "embedded",
      "permission",
      `embedded PostgreSQL: no permission on ${dataDir} (${lastProblem(output)}); set LOOPS_SYNC_DATA_DIR to a folder you own, ${USE_OTHER}`,
    );
  }
  return new DbError(
    "embedded",
    "failed",
    `embedded PostgreSQL did not start (${lastProblem(output)}); remove ${dataDir} to start afresh, ${USE_OTHER}`,
  );
}

/** One line for a file-system or spawn error (an `errno` code such as EACCES or ENOSPC) on `target`. */
export function classifySystemError(error: unknown, target: string): DbError<"embedded"> {
  const e = error as NodeJS.ErrnoException;
  if (e?.code === "ENOSPC" || e?.code === "EDQUOT") {
    return new DbError(
      "embedded",
      "disk-full",
      `embedded PostgreSQL: the disk holding ${target} is full; free some space, set LOOPS_SYNC_DATA_DIR to a folder on another disk, ${USE_OTHER}`,
      { cause: error },
    );
  }
  if (e?.code === "EACCES" || e?.code === "EPERM" || e?.code === "EROFS") {
    return new DbError(
      "embedded",
      "permission",
      `embedded PostgreSQL: no permission to use ${target} (${e.code}); set LOOPS_SYNC_DATA_DIR to a folder you can write, ${USE_OTHER}`,
      { cause: error },
    );
  }
  // Node's messages already start with the code ("ENOTDIR: not a directory, mkdir …"): say it once.
  const message = e?.message?.split("\n")[0];
  const reason =
    (message && e?.code && !message.startsWith(e.code) ? `${e.code}: ${message}` : (message ?? e?.code)) ||
    String(error);
  return new DbError("embedded", "failed", `embedded PostgreSQL did not start (${reason}); ${USE_OTHER}`, {
    cause: error,
  });
}
