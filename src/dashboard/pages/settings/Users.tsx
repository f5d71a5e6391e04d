import { type FormEvent, useCallback, useEffect, useState } from "react";
import { type Answer, ApiError, call, client } from "../../api";

type User = Answer<"/v1/users">["users"][number];

/** The workspace's users: invite by e-mail with a role, which answers a one-time setup link. */
export function Users() {
  const [users, setUsers] = useState<User[]>([]);
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    const query = { limit: 200 };
    setUsers((await call(client.GET("/v1/users", { params: { query } }))).users);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  async function invite(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    try {
      const body = {
        email: String(form.get("email") ?? ""),
        name: String(form.get("name") ?? ""),
        role: form.get("role") === "admin" ? ("admin" as const) : ("agent" as const),
      };
      const answer = await call(client.POST("/v1/users", { body }));
      setLink(answer.setup_url);
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not invite");
    }
  }
  return (
    <section className="card" aria-label="Users" id="users">
      <h2>Users</h2>
      <form onSubmit={invite} className="row">
        <label>
          E-mail
          <input name="email" type="email" required />
        </label>
        <label>
          Name
          <input name="name" required />
        </label>
        <label>
          Role
          <select name="role" defaultValue="agent">
            <option value="admin">admin</option>
            <option value="agent">agent</option>
          </select>
        </label>
        <button type="submit">Invite</button>
      </form>
      {link && (
        <p role="status">
          Send this one-time setup link: <code>{link}</code>
        </p>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <ul>
        {users.map((u) => (
          <li key={u.id}>
            {u.name} <span className="muted">{u.email}</span> · {u.role}
          </li>
        ))}
      </ul>
    </section>
  );
}
