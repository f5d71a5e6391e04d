import { LinkDomainsSection } from "../../components/LinkDomainsSection";
import { ApiKeys } from "./ApiKeys";
import { Registration } from "./Registration";
import { Users } from "./Users";
import { WorkspaceSettings } from "./WorkspaceSettings";

/** The page's sections, for its table of contents (each section's aria-label). */
const SECTIONS = ["Workspace", "API keys", "Users", "10DLC brands", "10DLC campaigns", "Short codes"];

/**
 * Settings (admins only), in sections: the workspace and its sending rules, API keys, users, then
 * sender registration (10DLC brands and campaigns, short codes). Further sections mount in the
 * marked spot below, one line each.
 */
export function SettingsPage() {
  return (
    <div className="page">
      <h1>Settings</h1>
      <nav aria-label="Settings sections" className="toc">
        {SECTIONS.map((name) => (
          <a key={name} href={`#${anchorOf(name)}`}>
            {name}
          </a>
        ))}
      </nav>
      <WorkspaceSettings />
      <ApiKeys />
      <Users />
      <LinkDomainsSection />
      <Registration />
      {/* More sections mount here, one line each (e.g. branded link domains). */}
    </div>
  );
}

function anchorOf(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, "-");
}
