import { type FormEvent, useCallback, useEffect, useState } from "react";
import { type Answer, ApiError, call, client } from "../api";
import { ConfirmButton, ErrorAlert } from "./feedback";

type LinkDomain = Answer<"/v1/link-domains">["link_domains"][number];

/**
 * Settings → Link domains (API.md §7.5): add a domain of the workspace's own, follow the steps that
 * point it at this server, check it, choose the default, delete. Self-contained: it talks to
 * `/v1/link-domains` only.
 */
export function LinkDomainsSection() {
  const [domains, setDomains] = useState<LinkDomain[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const load = useCallback(async () => {
    const query = { limit: 200 };
    setDomains((await call(client.GET("/v1/link-domains", { params: { query } }))).link_domains);
  }, []);
  useEffect(() => {
    void load().catch(() => setError("Could not load the link domains"));
  }, [load]);

  /** Runs one action on the list, showing the API's message when it is refused. */
  async function act(id: string, action: () => Promise<unknown>, fallback: string) {
    setError(null);
    setBusy(id);
    try {
      await action();
      await load();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : fallback);
    } finally {
      setBusy(null);
    }
  }

  async function add(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const domain = String(new FormData(formElement).get("domain") ?? "");
    await act(
      "new",
      async () => {
        await call(client.POST("/v1/link-domains", { body: { domain } }));
        formElement.reset();
      },
      "Could not add the domain",
    );
  }

  const serverHost = window.location.host;
  return (
    <section className="card" aria-label="Link domains">
      <h2>Link domains</h2>
      <p className="muted">
        Carriers filter texts whose links use shared or public domains. Add a domain of your own (a subdomain
        such as <code>go.yourbrand.com</code>) and every tracked link of the workspace goes out on it.
      </p>
      <form onSubmit={add} className="row">
        <label>
          Domain
          <input name="domain" required placeholder="go.yourbrand.com" />
        </label>
        <button type="submit" disabled={busy === "new"}>
          Add domain
        </button>
      </form>
      <ErrorAlert error={error} />
      <table>
        <thead>
          <tr>
            <th>Domain</th>
            <th>Status</th>
            <th>Default</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {domains.map((d) => (
            <tr key={d.id}>
              <td>
                <code>{d.domain}</code>
                {d.status !== "verified" && (
                  <details>
                    <summary>How to point it at this server</summary>
                    <ol>
                      <li>
                        At your DNS provider, add a <strong>CNAME</strong> record: <code>{d.domain}</code> →{" "}
                        <code>{serverHost.split(":")[0]}</code>. The server (or the proxy in front of it)
                        needs an HTTPS certificate for <code>{d.domain}</code>.
                      </li>
                      <li>
                        Or, on a web server you already run for that name, add a{" "}
                        <strong>reverse proxy</strong> that forwards <code>/r/</code> and{" "}
                        <code>/.well-known/outreach/</code> to this server.
                      </li>
                      <li>
                        Then press Check: this server must answer at <code>{d.verification.url}</code> with{" "}
                        <code>{d.verification.token}</code>.
                      </li>
                    </ol>
                  </details>
                )}
              </td>
              <td>
                {d.status}
                {d.failure_reason && <div className="error">{d.failure_reason}</div>}
              </td>
              <td>
                {d.status === "verified" && (
                  <label className="check">
                    <input
                      type="checkbox"
                      checked={d.is_default}
                      disabled={busy === d.id}
                      onChange={(event) =>
                        act(
                          d.id,
                          () =>
                            call(
                              client.PATCH("/v1/link-domains/{id}", {
                                params: { path: { id: d.id } },
                                body: { is_default: event.target.checked },
                              }),
                            ),
                          "Could not change the default",
                        )
                      }
                      aria-label={`Default link domain ${d.domain}`}
                    />{" "}
                    default
                  </label>
                )}
              </td>
              <td>
                <button
                  type="button"
                  disabled={busy === d.id}
                  onClick={() =>
                    act(
                      d.id,
                      () =>
                        call(client.POST("/v1/link-domains/{id}/verify", { params: { path: { id: d.id } } })),
                      "Could not check the domain",
                    )
                  }
                  aria-label={`Check ${d.domain}`}
                >
                  {busy === d.id ? "Checking…" : "Check"}
                </button>{" "}
                <ConfirmButton
                  className="danger"
                  disabled={busy === d.id}
                  question={`Delete ${d.domain}? Links that named it fall back to the default domain.`}
                  onConfirm={() =>
                    act(
                      d.id,
                      () => call(client.DELETE("/v1/link-domains/{id}", { params: { path: { id: d.id } } })),
                      "Could not delete the domain",
                    )
                  }
                  aria-label={`Delete ${d.domain}`}
                >
                  Delete
                </ConfirmButton>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
