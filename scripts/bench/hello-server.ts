// The baseline: the smallest Bun.serve that answers JSON.
const port = Number(process.argv[2] ?? 0);
Bun.serve({ port, fetch: () => Response.json({ ok: true }) });
