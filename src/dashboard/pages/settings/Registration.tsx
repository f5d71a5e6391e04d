import { lines, ResourceSection } from "../../components/resource";

/** 10DLC brands and campaigns, and short-code requests, with their review status and reasons. */
export function Registration() {
  return (
    <>
      <ResourceSection
        title="10DLC brands"
        path="/v1/10dlc/brands"
        many="brands"
        createLabel="Register brand"
        fields={[
          { name: "legal_name", label: "Legal name", required: true },
          { name: "ein", label: "EIN (12-3456789)" },
          {
            name: "entity_type",
            label: "Entity type",
            type: "select",
            options: ["PRIVATE_PROFIT", "PUBLIC_PROFIT", "NON_PROFIT", "GOVERNMENT", "SOLE_PROPRIETOR"],
          },
          { name: "vertical", label: "Vertical", placeholder: "RETAIL", required: true },
          { name: "email", label: "E-mail", type: "email", required: true },
          { name: "phone", label: "Phone", required: true },
          { name: "street", label: "Street", required: true },
          { name: "city", label: "City", required: true },
          { name: "state", label: "State", required: true },
          { name: "postal_code", label: "ZIP", required: true },
        ]}
        transform={({ street, city, state, postal_code, ...rest }) => ({
          ...rest,
          address: { street, city, state, postal_code, country: "US" },
        })}
        columns={[
          { label: "Legal name", cell: (r) => r.legal_name },
          { label: "Status", cell: (r) => r.status },
          { label: "Reasons", cell: (r) => r.failure_reasons.join("; ") },
        ]}
      />
      <ResourceSection
        title="10DLC campaigns"
        path="/v1/10dlc/campaigns"
        many="campaigns"
        columns={[
          { label: "Use case", cell: (r) => r.use_case },
          { label: "Status", cell: (r) => r.status },
          { label: "Reasons", cell: (r) => r.rejection_reasons.join("; ") },
        ]}
      />
      <ResourceSection
        title="Short codes"
        path="/v1/short-codes/requests"
        many="requests"
        createLabel="Request a short code"
        fields={[
          { name: "type", label: "Type", type: "select", options: ["random", "vanity"] },
          { name: "vanity_code", label: "Vanity code (5–6 digits)" },
          { name: "use_case", label: "Use case", placeholder: "MARKETING", required: true },
          { name: "monthly_volume", label: "Monthly volume", type: "number", required: true },
          {
            name: "sample_messages",
            label: "Sample messages (one per line)",
            type: "textarea",
            required: true,
            parse: lines,
          },
        ]}
        columns={[
          { label: "Type", cell: (r) => r.type },
          { label: "Status", cell: (r) => r.status },
          { label: "Code", cell: (r) => r.short_code ?? "" },
          { label: "Reasons", cell: (r) => r.rejection_reasons.join("; ") },
        ]}
      />
    </>
  );
}
