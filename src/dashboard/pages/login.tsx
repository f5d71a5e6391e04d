import { type FormEvent, useEffect, useState } from "react";
import { ApiError, call, client } from "../api";

/** Why an OAuth sign-in came back without a session (`/?oauth_error=…`). */
const OAUTH_ERRORS: Record<string, string> = {
  state: "The sign-in took too long or was started elsewhere: try again.",
  denied: "The sign-in was declined.",
  provider: "The provider did not answer: try again later.",
  no_account: "No account has that e-mail address: ask an admin for an invitation.",
};

/** Sign in with e-mail and password; the API's answer ("Invalid email or password") shows as is. */
export function LoginPage({ onSignedIn }: { onSignedIn: () => void }) {
  const oauthError = new URLSearchParams(window.location.search).get("oauth_error");
  const [error, setError] = useState<string | null>(
    oauthError ? (OAUTH_ERRORS[oauthError] ?? "Could not sign in") : null,
  );
  const [busy, setBusy] = useState(false);
  const [providers, setProviders] = useState<string[]>([]);
  useEffect(() => {
    void call(client.GET("/auth/providers")).then(
      (a) => setProviders(a.providers),
      () => setProviders([]),
    );
  }, []);
  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const body = { email: String(form.get("email") ?? ""), password: String(form.get("password") ?? "") };
      await call(client.POST("/auth/login", { body }));
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
        {providers.map((provider) => (
          <a key={provider} className="oauth" href={`/auth/oauth/${provider}`}>
            Sign in with {provider === "github" ? "GitHub" : "Google"}
          </a>
        ))}
      </form>
    </div>
  );
}
