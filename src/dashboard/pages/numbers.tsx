import { useState } from "react";
import { type Answer, ApiError, call, client } from "../api";

type Available = Answer<"/v1/numbers/available">["numbers"][number];

import { ResourceSection } from "../components/resource";

/** Numbers (search and order at the carrier) and pools. */
export function NumbersPage() {
  const [available, setAvailable] = useState<Available[]>([]);
  const [areaCode, setAreaCode] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [key, setKey] = useState(0);
  async function search() {
    setError(null);
    try {
      setAvailable(
        (
          await call(
            client.GET("/v1/numbers/available", {
              params: { query: { country: "US", limit: 10, ...(areaCode ? { area_code: areaCode } : {}) } },
            }),
          )
        ).numbers,
      );
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Search failed");
    }
  }
  async function order(number: string) {
    setError(null);
    try {
      await call(client.POST("/v1/numbers", { body: { number } }));
      setAvailable(available.filter((n) => n.number !== number));
      setKey(key + 1);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : "Order failed");
    }
  }
  return (
    <div className="page">
      <h1>Numbers and pools</h1>
      <section className="card" aria-label="Order numbers">
        <h2>Order a number</h2>
        <div className="row">
          <label>
            Area code
            <input value={areaCode} onChange={(e) => setAreaCode(e.target.value)} inputMode="numeric" />
          </label>
          <button type="button" onClick={search}>
            Search
          </button>
        </div>
        {error && (
          <p className="error" role="alert">
            {error}
          </p>
        )}
        <ul>
          {available.map((n) => (
            <li key={n.number} className="row">
              {n.number} <span className="muted">{[n.locality, n.region].filter(Boolean).join(", ")}</span> $
              {n.monthly_cost}/mo
              <button type="button" onClick={() => order(n.number)}>
                Order
              </button>
            </li>
          ))}
        </ul>
      </section>
      <ResourceSection
        key={key}
        title="Numbers"
        path="/v1/numbers"
        many="numbers"
        columns={[
          { label: "Number", cell: (r) => r.number },
          { label: "Pool", cell: (r) => r.pool_id ?? "" },
          { label: "Daily limit", cell: (r) => r.daily_limit ?? "none" },
          { label: "Sent today", cell: (r) => r.sent_today },
        ]}
      />
      <ResourceSection
        title="Pools"
        path="/v1/pools"
        many="pools"
        fields={[{ name: "name", label: "Name", required: true }]}
        columns={[
          { label: "Name", cell: (r) => r.name },
          { label: "Numbers", cell: (r) => r.numbers },
        ]}
        canDelete
      />
    </div>
  );
}
