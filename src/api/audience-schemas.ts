import { t } from "elysia";
import { Deleted, Enum, Ok, PageFields, Timestamp } from "../http/schemas";

export { PageFields };

/** The Contact as every audience endpoint returns it (API.md §3 Contacts; seed "Contact"). */
export const ContactSchema = t.Object(
  {
    id: t.String({ description: "Contact id (UUID)" }),
    phone_number: t.String({
      description: "E.164 phone number, unique per workspace",
      examples: ["+12025550123"],
    }),
    first_name: t.Union([t.String(), t.Null()], { description: "First name" }),
    last_name: t.Union([t.String(), t.Null()], { description: "Last name" }),
    email: t.Union([t.String(), t.Null()], { description: "Email address" }),
    external_id: t.Union([t.String(), t.Null()], { description: "Your system's id for this person" }),
    source: t.String({
      description: "Where the contact came from: api, import, inbound, ...",
      examples: ["api"],
    }),
    opted_in: t.Boolean({ description: "False blocks every send to this contact" }),
    timezone: t.Union([t.String(), t.Null()], {
      description:
        "IANA zone. With `timezone_source: given` the send-time rules use it alone; with `area_code` it is the " +
        "area code's main zone, shown for display, and the rules check every zone the area code spans",
      examples: ["America/New_York"],
    }),
    timezone_source: Enum(
      ["given", "area_code"],
      "given: the zone came from the caller or an import; area_code: from the phone number's area code " +
        "(sends wait until allowed in every zone the area code spans)",
    ),
    state: t.Union([t.String(), t.Null()], {
      description:
        "US state or Canadian province (two letters) given by the caller or an import; the state rules use it " +
        "before the area code's state. Null: the area code's state",
      examples: ["FL"],
    }),
    fields: t.Record(t.String(), t.Unknown(), {
      description: "Custom values (string, number, boolean). Keys come back sorted (code-point order).",
    }),
    created_at: Timestamp("When the contact was created"),
    updated_at: Timestamp("When the contact last changed"),
  },
  { description: "A contact" },
);

export const NullableText = (description: string) =>
  t.Optional(t.Union([t.String(), t.Null()], { description, error: "must be a string or null" }));

// Checked in the domain (an object of scalars), so the schema takes any JSON and documents the shape.
export const FieldsInput = t.Optional(
  t.Unknown({
    description:
      "Object of custom values (string, number, boolean). Merged on update; a key set to null is removed.",
    examples: [{ plan: "pro", seats: 3 }],
  }),
);

/** `{ok:true, deleted:true}` */
export const DeletedEnvelope = t.Object({ ok: Ok, deleted: Deleted });
