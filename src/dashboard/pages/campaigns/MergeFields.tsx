/** Merge fields a message can use, in words; `{{x|fallback}}` fills in when the contact has none. */
const FIELDS = [
  { token: "{{first_name|there}}", label: "First name (or “there”)" },
  { token: "{{last_name}}", label: "Last name" },
  { token: "{{email}}", label: "E-mail" },
  { token: "{{phone_number}}", label: "Phone number" },
  { token: "{{offer_url}}", label: "Tracked offer link (needs an offer)" },
];

/** A picker that inserts a merge field where the cursor is. */
export function MergeFieldPicker({ onInsert }: { onInsert: (token: string) => void }) {
  return (
    <label className="merge-picker">
      Insert a merge field
      <select
        value=""
        onChange={(e) => {
          if (e.target.value) onInsert(e.target.value);
        }}
      >
        <option value="">Choose…</option>
        {FIELDS.map((f) => (
          <option key={f.token} value={f.token}>
            {f.label}
          </option>
        ))}
        <option value="{{fields.}}">A custom field…</option>
      </select>
    </label>
  );
}
