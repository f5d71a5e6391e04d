import { type FormEvent, useState } from "react";
import { ApiError, call, client } from "../api";

/** The one-time setup link (`/setup?token=…`): name, e-mail and password for a new account. */
export function SetupPage({ onDone }: { onDone: () => void }) {
  const token = new URLSearchParams(window.location.search).get("token") ?? "";
  const [error, setError] = useState<string | null>(null);
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    try {
      const email = String(form.get("email") ?? "");
      const body = {
        token,
        name: String(form.get("name") ?? ""),
        ...(email ? { email } : {}),
        password: String(form.get("password") ?? ""),
      };
      await call(client.POST("/auth/setup", { body }));
      window.history.replaceState(null, "", "/inbox");
      onDone();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not set up the account");
    }
  }
  return (
    <div className="center">
      <form className="card narrow" onSubmit={submit} aria-label="Set up your account">
        <h1>Set up your account</h1>
        <label>
          Name
          <input name="name" required autoComplete="name" />
        </label>
        <label>
          E-mail
          <input name="email" type="email" autoComplete="username" />
        </label>
        <label>
          Password (at least 10 characters)
          <input name="password" type="password" minLength={10} required autoComplete="new-password" />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit">Create account</button>
      </form>
    </div>
  );
}
