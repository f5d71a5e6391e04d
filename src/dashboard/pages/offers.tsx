import { ResourceSection } from "../components/resource";

/** Offers and their tracked links. */
export function OffersPage() {
  return (
    <div className="page">
      <h1>Offers</h1>
      <ResourceSection
        title="Offers"
        path="/v1/offers"
        many="offers"
        fields={[
          { name: "name", label: "Name", required: true },
          { name: "destination_url", label: "Destination URL", type: "url", required: true },
          { name: "value", label: "Value", type: "number" },
          { name: "currency", label: "Currency", placeholder: "USD" },
        ]}
        columns={[
          { label: "Name", cell: (r) => r.name },
          { label: "Tracking link", cell: (r) => <code className="small">{r.tracking_url}</code> },
          { label: "Status", cell: (r) => r.status },
        ]}
        canDelete
      />
    </div>
  );
}
