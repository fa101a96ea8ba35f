import type { GrantableRights, GrantRoleRightsResult } from "@loops-sync/db";
import { GRANTABLE_RIGHTS } from "@loops-sync/db/roles/role-rights";
import { Argument, Command, Option } from "commander";
import { JSON_FLAG_HELP, printJson } from "../output.ts";

/** One line an operator reads: what the role can do now. */
export function describeGrant(result: GrantRoleRightsResult): string {
  const where = `in database ${result.database}`;
  if (result.rights === "none") {
    return `grant: role ${result.role} has no loops-sync rights ${where} now (had: ${result.previous})`;
  }
  const functions = result.functions.length > 0 ? result.functions.join(", ") : "none";
  return (
    `grant: role ${result.role} is a ${result.rights} ${where} (had: ${result.previous}): ` +
    `reads ${result.schemas.join(", ")}; executes ${functions}; writes nothing else`
  );
}

export function createGrantCommand(): Command {
  return new Command("grant")
    .description(
      "let an existing Postgres role read the mirror (reader: replica, reporting, read_changes) or also consume the feed (consumer); migrate keeps it current; --revoke takes it back",
    )
    .addArgument(new Argument("<rights>", "what the role may do").choices(GRANTABLE_RIGHTS))
    .addArgument(new Argument("<role>", "an existing role's name, as Postgres spells it"))
    .addOption(new Option("--revoke", "take these rights (and any above them) back"))
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .action(async (rights: GrantableRights, role: string, options: { revoke?: boolean; json?: boolean }) => {
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "grant", poolSize: 1 });
      try {
        const { grantRoleRights } = await import("@loops-sync/db");
        const result = await grantRoleRights(runtime.sql, { role, rights, revoke: options.revoke ?? false });
        if (options.json) printJson(result);
        else console.log(describeGrant(result));
      } finally {
        await runtime.close();
      }
    });
}
