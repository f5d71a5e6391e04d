import { type FormEvent, useEffect, useState } from "react";
import { type Answer, ApiError, call, client } from "../../api";

type Settings = Answer<"/v1/settings">["settings"];

/** Every IANA time zone the browser knows (a short list where it cannot say). */
function timeZones(current: string): string[] {
  const known =
    typeof Intl.supportedValuesOf === "function"
      ? Intl.supportedValuesOf("timeZone")
      : ["America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "UTC"];
  return known.includes(current) ? known : [current, ...known];
}

/** The workspace: name, time zone (a picker), quiet hours, state rules, registration and daily budgets. */
export function WorkspaceSettings() {
  const [settings, setSettings] = useState<Settings | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void call(client.GET("/v1/settings")).then((a) => setSettings(a.settings));
  }, []);
  if (!settings) return null;
  async function save(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    setMessage(null);
    try {
      const body = {
        name: String(form.get("name") ?? ""),
        timezone: String(form.get("timezone") ?? ""),
        quiet_hours: {
          enabled: form.get("quiet") === "on",
          start_hour: Number(form.get("start_hour")),
          end_hour: Number(form.get("end_hour")),
        },
        state_rules: form.get("state_rules") === "on",
        require_registration: form.get("require_registration") === "on",
        one_off_daily_limit: dailyBudget(form.get("one_off_daily_limit")),
        number_orders_daily_limit: dailyBudget(form.get("number_orders_daily_limit")),
      };
      const answer = await call(client.PATCH("/v1/settings", { body }));
      setSettings(answer.settings);
      setMessage("Saved");
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Could not save");
    }
  }
  return (
    <section className="card" aria-label="Workspace" id="workspace">
      <h2>Workspace</h2>
      <form onSubmit={save} className="grid">
        <label>
          Name
          <input name="name" defaultValue={settings.name} />
        </label>
        <label>
          Time zone
          <select name="timezone" defaultValue={settings.timezone}>
            {timeZones(settings.timezone).map((zone) => (
              <option key={zone} value={zone}>
                {zone.replaceAll("_", " ")}
              </option>
            ))}
          </select>
        </label>
        <label className="check">
          <input type="checkbox" name="quiet" defaultChecked={settings.quiet_hours.enabled} /> Quiet hours
        </label>
        <label>
          From (hour)
          <input
            name="start_hour"
            type="number"
            min={0}
            max={23}
            defaultValue={settings.quiet_hours.start_hour}
          />
        </label>
        <label>
          Until (hour)
          <input
            name="end_hour"
            type="number"
            min={0}
            max={23}
            defaultValue={settings.quiet_hours.end_hour}
          />
        </label>
        <label className="check">
          <input type="checkbox" name="state_rules" defaultChecked={settings.state_rules} /> US state rules
        </label>
        <label className="check">
          <input type="checkbox" name="require_registration" defaultChecked={settings.require_registration} />{" "}
          Require 10DLC registration
        </label>
        <label>
          One-off sends per day (blank: no limit)
          <input
            name="one_off_daily_limit"
            type="number"
            min={0}
            step={1}
            defaultValue={settings.one_off_daily_limit ?? ""}
          />
        </label>
        <label>
          Numbers ordered per day (blank: no limit)
          <input
            name="number_orders_daily_limit"
            type="number"
            min={0}
            step={1}
            defaultValue={settings.number_orders_daily_limit ?? ""}
          />
        </label>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        {message && <p role="status">{message}</p>}
        <button type="submit">Save</button>
      </form>
    </section>
  );
}

/** A daily budget field: blank is no budget (null), else the whole number typed. */
function dailyBudget(value: FormDataEntryValue | null): number | null {
  const text = String(value ?? "").trim();
  return text === "" ? null : Number(text);
}
