import { type FormEvent, useState } from "react";
import { ApiError, post } from "../api";

/** Sign in with e-mail and password; the API's answer ("Invalid email or password") shows as is. */
export function LoginPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      await post("/auth/login", { email: form.get("email"), password: form.get("password") });
      onSignedIn();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not sign in");
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="center">
      <form className="card narrow" onSubmit={submit} aria-label="Sign in">
        <h1>Sign in to outreach</h1>
        <label>
          E-mail
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </div>
  );
}
