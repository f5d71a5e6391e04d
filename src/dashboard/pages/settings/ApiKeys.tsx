import { type FormEvent, useCallback, useEffect, useState } from "react";
import { type Answer, ApiError, call, client, type Posted } from "../../api";
import { ConfirmButton, ErrorAlert, SecretOnce } from "../../components/feedback";

type ApiKey = Answer<"/v1/api-keys">["api_keys"][number];

/** API keys: create one (read, or read and write), shown once; revoke after a confirmation. */
export function ApiKeys() {
  const [keys, setKeys] = useState<ApiKey[]>([]);
  const [created, setCreated] = useState<Posted<"/v1/api-keys">["api_key"] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async () => {
    const query = { limit: 200 };
    setKeys((await call(client.GET("/v1/api-keys", { params: { query } }))).api_keys);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    setError(null);
    try {
      const scopes: ("read" | "write")[] = form.get("write") === "on" ? ["read", "write"] : ["read"];
      const body = { name: String(form.get("name") ?? ""), scopes };
      const answer = await call(client.POST("/v1/api-keys", { body }));
      setCreated(answer.api_key);
      formElement.reset();
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not create the key");
    }
  }
  async function revoke(id: string) {
    await call(client.DELETE("/v1/api-keys/{id}", { params: { path: { id } } }));
    await load();
  }
  return (
    <section className="card" aria-label="API keys" id="api-keys">
      <h2>API keys</h2>
      {created && (
        <SecretOnce
          message="Copy this key now: it is shown only once."
          secret={created.key}
          testId="new-key"
          onDone={() => setCreated(null)}
        />
      )}
      <form onSubmit={create} className="row">
        <label>
          Name
          <input name="name" required />
        </label>
        <label className="check">
          <input type="checkbox" name="write" defaultChecked /> Can write
        </label>
        <button type="submit">Create key</button>
      </form>
      <ErrorAlert error={error} />
      <table>
        <thead>
          <tr>
            <th>Name</th>
            <th>Prefix</th>
            <th>Scopes</th>
            <th>Last used</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.prefix}</code>
              </td>
              <td>{key.scopes.join(", ")}</td>
              <td>{key.last_used_at ? new Date(key.last_used_at).toLocaleString() : "never"}</td>
              <td>
                {key.revoked_at ? (
                  <span className="muted">revoked</span>
                ) : (
                  <ConfirmButton
                    className="danger"
                    question={`Revoke the key “${key.name}”? Programs using it stop working at once.`}
                    onConfirm={() => revoke(key.id)}
                    aria-label={`Revoke ${key.name}`}
                  >
                    Revoke
                  </ConfirmButton>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
