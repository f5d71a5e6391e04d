import type { ReactNode } from "react";

/** A report's table: loading, empty (in words) or one row per figure set, in the API's order. */
export function ReportTable<Row>(props: {
  rows: Row[] | null;
  empty: string;
  head: string[];
  row: (r: Row) => ReactNode[];
}) {
  if (props.rows === null) return <p className="muted">Loading…</p>;
  if (props.rows.length === 0) return <p className="muted">{props.empty}</p>;
  return (
    <table>
      <thead>
        <tr>
          {props.head.map((h) => (
            <th key={h}>{h}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((r, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: rows of a report, shown in order
          <tr key={i}>
            {props.row(r).map((cell, j) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the columns of one row
              <td key={j}>{cell}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
