import { useEffect, useState } from "react";
import { type Answer, call, client } from "../api";

type Contact = Answer<"/v1/contacts">["contacts"][number];

export function contactLabel(c: Pick<Contact, "first_name" | "last_name" | "phone_number">): string {
  const name = [c.first_name, c.last_name].filter(Boolean).join(" ");
  return name ? `${name} · ${c.phone_number}` : c.phone_number;
}

/**
 * Chooses a contact of the workspace: a search box (name or number, as `GET /v1/contacts?q=`) and
 * the first 20 matches in a select. `none` names the empty choice ("A made-up contact", "The first
 * 50 of the audience"…).
 */
export function ContactPicker(props: {
  value: string;
  onChange: (contactId: string) => void;
  none: string;
  label?: string;
}) {
  const [q, setQ] = useState("");
  const [found, setFound] = useState<Contact[]>([]);
  useEffect(() => {
    const timer = setTimeout(() => {
      const query = { limit: 20, ...(q.trim() ? { q: q.trim() } : {}) };
      call(client.GET("/v1/contacts", { params: { query } })).then(
        (a) => setFound(a.contacts),
        () => setFound([]),
      );
    }, 200);
    return () => clearTimeout(timer);
  }, [q]);
  return (
    <>
      <label>
        Find a contact
        <input type="search" value={q} placeholder="Name or number" onChange={(e) => setQ(e.target.value)} />
      </label>
      <label>
        {props.label ?? "Contact"}
        <select value={props.value} onChange={(e) => props.onChange(e.target.value)}>
          <option value="">{props.none}</option>
          {found.map((c) => (
            <option key={c.id} value={c.id}>
              {contactLabel(c)}
            </option>
          ))}
        </select>
      </label>
    </>
  );
}
