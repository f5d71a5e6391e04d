import { defineConfig } from "drizzle-kit";

/** PostgreSQL migrations, from the generated pg-core twins of the tables (scripts/generate-pg-schema.ts). */
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema/pg/index.ts",
  out: "./migrations/pg",
});
