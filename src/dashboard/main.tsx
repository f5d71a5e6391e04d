/**
 * The dashboard: a React app served by the binary at `/` (API.md §6.7). It signs in with the
 * session cookie and calls `/v1` like any client. One folder per page under pages/; no state
 * library beyond React's own; the flow editor is a separate chunk loaded on its page.
 */
// React Flow's stylesheet is global: a lazily loaded chunk's CSS is not injected by its import.
import "@xyflow/react/dist/style.css";
import "uplot/dist/uPlot.min.css";
import "./styles.css";
import { lazy, Suspense, useCallback, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { Link, Redirect, Route, Switch, useLocation } from "wouter";
import { call, client } from "./api";
import { AgentsPage } from "./pages/agents/index";
import { AudiencePage } from "./pages/audience";
import { CampaignsPage } from "./pages/campaigns/index";
import { ContactsPage } from "./pages/contacts/index";
import { InboxPage } from "./pages/inbox";
import { LoginPage } from "./pages/login";
import { NumbersPage } from "./pages/numbers";
import { OffersPage } from "./pages/offers";
import { SettingsPage } from "./pages/settings";
import { SetupPage } from "./pages/setup";
import { WebhooksPage } from "./pages/webhooks";

const FlowsPage = lazy(() => import("./pages/flows/index"));
const AnalyticsPage = lazy(() => import("./pages/analytics"));

export interface Session {
  user: { id: string; email: string; name: string; role: string };
  workspace: { id: string; name: string };
  role: string;
}

const NAV: { href: string; label: string; admin?: boolean }[] = [
  { href: "/inbox", label: "Inbox" },
  { href: "/contacts", label: "Contacts" },
  { href: "/audience", label: "Lists & segments" },
  { href: "/campaigns", label: "Campaigns" },
  { href: "/flows", label: "Flows" },
  { href: "/agents", label: "Agents" },
  { href: "/numbers", label: "Numbers" },
  { href: "/offers", label: "Offers" },
  { href: "/analytics", label: "Analytics" },
  { href: "/webhooks", label: "Webhooks" },
  { href: "/settings", label: "Settings", admin: true },
];

/** An unknown path: says so, and offers the way back. */
function NotFound() {
  const [location] = useLocation();
  return (
    <div className="page">
      <h1>Page not found</h1>
      <p>
        There is no page at <code>{location}</code>.
      </p>
      <p>
        <Link href="/inbox">Go to the inbox</Link>
      </p>
    </div>
  );
}

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const [location] = useLocation();
  const admin = session.role === "admin";
  return (
    <div className="shell">
      <nav className="nav" aria-label="Main">
        <div className="brand">outreach</div>
        <ul>
          {NAV.filter((item) => admin || !item.admin).map((item) => (
            <li key={item.href}>
              <Link href={item.href} className={location.startsWith(item.href) ? "active" : ""}>
                {item.label}
              </Link>
            </li>
          ))}
        </ul>
        <div className="who">
          <span>{session.user.name}</span>
          <span className="muted">{session.workspace.name}</span>
          <button type="button" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </nav>
      <main className="main">
        <Switch>
          <Route path="/inbox/:id?">
            {(params) => <InboxPage threadId={params.id ?? null} me={session.user.id} />}
          </Route>
          <Route path="/contacts/:id?">{(params) => <ContactsPage contactId={params.id ?? null} />}</Route>
          <Route path="/audience" component={AudiencePage} />
          <Route path="/agents/:id?">{(params) => <AgentsPage agentId={params.id ?? null} />}</Route>
          <Route path="/numbers" component={NumbersPage} />
          <Route path="/offers" component={OffersPage} />
          <Route path="/webhooks" component={WebhooksPage} />
          <Route path="/campaigns/:id?">{(params) => <CampaignsPage campaignId={params.id ?? null} />}</Route>
          <Route path="/flows/:id?">
            {(params) => (
              <Suspense fallback={<p>Loading the flow editor…</p>}>
                <FlowsPage flowId={params.id ?? null} />
              </Suspense>
            )}
          </Route>
          <Route path="/analytics">
            <Suspense fallback={<p>Loading…</p>}>
              <AnalyticsPage />
            </Suspense>
          </Route>
          <Route path="/settings">
            {admin ? <SettingsPage /> : <p role="alert">Your account cannot open settings.</p>}
          </Route>
          <Route path="/">
            <Redirect to="/inbox" />
          </Route>
          <Route>
            <NotFound />
          </Route>
        </Switch>
      </main>
    </div>
  );
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [location, navigate] = useLocation();
  const load = useCallback(async () => {
    try {
      const answer = await call(client.GET("/auth/session"));
      setSession({ user: answer.user, workspace: answer.workspace, role: answer.role });
    } catch {
      setSession(null);
    }
  }, []);
  const onSetup = location.startsWith("/setup");
  useEffect(() => {
    // The setup page needs no session (and would only get a 401 for asking).
    if (!onSetup) void load();
    const signedOut = () => setSession(null);
    window.addEventListener("outreach:signed-out", signedOut);
    return () => window.removeEventListener("outreach:signed-out", signedOut);
  }, [load, onSetup]);
  if (location.startsWith("/setup"))
    return <SetupPage onDone={() => load().then(() => navigate("/inbox"))} />;
  if (session === undefined) return <p className="loading">Loading…</p>;
  if (session === null) return <LoginPage onSignedIn={() => load()} />;
  return (
    <Shell
      session={session}
      onSignOut={async () => {
        await call(client.POST("/auth/logout")).catch(() => undefined);
        setSession(null);
        navigate("/");
      }}
    />
  );
}

const root = document.getElementById("root");
if (root) createRoot(root).render(<App />);
