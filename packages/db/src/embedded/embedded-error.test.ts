import { describe, expect, it } from "vitest";
import { classifyStartOutput, classifySystemError } from "./embedded-error.ts";

const where = { dataDir: "/srv/x/pg", port: 5433 };

// Lines as PostgreSQL 18 prints them (LC_MESSAGES=C) for failures the integration tests cannot provoke.
describe("classifyStartOutput", () => {
  it("reads leftover backends of a killed server", () => {
    const output =
      'FATAL:  pre-existing shared memory block (key 5432001, ID 32768) is still in use\nHINT:  Terminate any old server processes associated with data directory "/srv/x/pg".';
    const error = classifyStartOutput(output, where);
    expect(error.code).toBe("already-running");
    expect(error.message).toContain("stop them");
  });

  it("reads a data folder owned by someone else", () => {
    const output =
      'FATAL:  data directory "/srv/x/pg" has wrong ownership\nHINT:  The server must be started by the user that owns the data directory.';
    const error = classifyStartOutput(output, where);
    expect(error.code).toBe("permission");
    expect(error.message).toBe(
      'embedded PostgreSQL: no permission on /srv/x/pg (data directory "/srv/x/pg" has wrong ownership); set LOOPS_SYNC_DATA_DIR to a folder you own, or set DATABASE_URL to a PostgreSQL server',
    );
  });

  it("reads a full disk while the server writes its lock file", () => {
    const output = 'FATAL:  could not write lock file "postmaster.pid": No space left on device';
    expect(classifyStartOutput(output, where).code).toBe("disk-full");
  });

  it("keeps every answer on one line", () => {
    for (const output of ["", "LOG:  a\nLOG:  b\nFATAL:  c", "Permission denied\nmore"]) {
      expect(classifyStartOutput(output, where).message).not.toContain("\n");
    }
  });
});

describe("classifySystemError", () => {
  it("names the errno and the folder", () => {
    const error = classifySystemError(Object.assign(new Error("x"), { code: "EROFS" }), "/ro/.data");
    expect(error.code).toBe("permission");
    expect(error.message).toContain("/ro/.data (EROFS)");
  });

  it("says an errno once when Node's message already starts with it", () => {
    const enotdir = Object.assign(new Error("ENOTDIR: not a directory, mkdir '/dev/null/x'"), {
      code: "ENOTDIR",
    });
    expect(classifySystemError(enotdir, "/dev/null/x").message).toContain(
      "(ENOTDIR: not a directory, mkdir '/dev/null/x')",
    );
    expect(classifySystemError(enotdir, "/dev/null/x").message).not.toContain("ENOTDIR: ENOTDIR");
  });
});
