import { defineConfig } from "drizzle-kit";

// `bun run db:generate` writes SQL migrations from the tables; core applies them at start.
export default defineConfig({
  dialect: "postgresql",
  schema: "./libs/schema/src/tables/index.ts",
  out: "./libs/schema/drizzle",
});
