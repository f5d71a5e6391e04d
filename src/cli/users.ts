import { provisionUser } from "../auth/accounts";
import { ROLES, type Role } from "../auth/roles";
import { listMembers } from "../auth/users";
import { databaseUrlFrom, dbPathFrom, publicUrlFrom } from "../config";
import { getWorkspace } from "../domain/workspace/workspaces";
import { openConfiguredDatabase } from "../server";
import { type ParsedArgs, requireFlag, UsageError } from "./args";

const USAGE =
  "usage: outreach users create --email E --workspace ID [--name N] [--role admin|agent] [--password-stdin]\n" +
  "       outreach users list --workspace ID";

/** The first line of stdin (the password of `--password-stdin`), without its line break. */
async function readPasswordLine(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("Password (shown as typed; pipe it in to hide it): ");
  for await (const line of console) return line.replace(/\r$/, "");
  throw new UsageError("--password-stdin: no password on stdin");
}

/**
 * `outreach users create|list`. `create` makes the user a member of the workspace (admin unless
 * `--role agent`); with `--password-stdin` it sets the password read from stdin, else it prints a
 * one-time setup link (24 h) — for an existing user, that link resets their password.
 */
export async function runUsersCommand(sub: string | undefined, flags: ParsedArgs["flags"]): Promise<number> {
  if (sub !== "create" && sub !== "list") throw new UsageError(USAGE);
  const workspaceId = requireFlag(flags, "workspace");
  let role: Role | undefined;
  let password: string | undefined;
  if (sub === "create") {
    requireFlag(flags, "email");
    if (flags.role !== undefined) {
      if (!ROLES.includes(flags.role as Role))
        throw new UsageError(`--role must be one of ${ROLES.join(", ")}`);
      role = flags.role as Role;
    }
    if (flags.name !== undefined && typeof flags.name !== "string")
      throw new UsageError("--name needs a value");
    // Read before the database is opened: a password typed at a terminal does not hold a lock.
    if (flags["password-stdin"]) password = await readPasswordLine();
  }
  const handle = await openConfiguredDatabase({
    dbPath: dbPathFrom(flags),
    databaseUrl: databaseUrlFrom(flags),
  });
  try {
    if (!(await getWorkspace(handle.db, workspaceId)))
      throw new UsageError(`workspace ${workspaceId} does not exist`);
    if (sub === "list") {
      const { users } = await listMembers(handle.db, workspaceId, { limit: 10_000, offset: 0 });
      const text = users
        .map((u) => `${u.id}  ${u.email}  ${u.role}  ${u.name}${u.setup_pending ? "  (setup pending)" : ""}`)
        .join("\n");
      console.log(flags.json ? JSON.stringify(users, null, 2) : text || "no users");
      return 0;
    }
    const result = await provisionUser(handle.db, {
      workspaceId,
      email: flags.email as string,
      name: typeof flags.name === "string" ? flags.name : undefined,
      role,
      password,
      publicUrl: publicUrlFrom(Number(process.env.PORT) || 3000),
      now: Date.now(),
    });
    const { user } = result;
    if (flags.json) {
      console.log(
        JSON.stringify({ ...user, workspace_id: workspaceId, setup_url: result.setup_url }, null, 2),
      );
    } else {
      const lines = [
        `${result.created ? "created" : "updated"} user ${user.id} (${user.email}, ${user.role})`,
      ];
      if (result.setup_url)
        lines.push(
          "One-time setup link (24 hours) to set the password and sign in:",
          "",
          `  ${result.setup_url}`,
        );
      else lines.push("Password set: sign in with it.");
      console.log(lines.join("\n"));
    }
    return 0;
  } finally {
    await handle.close();
  }
}
