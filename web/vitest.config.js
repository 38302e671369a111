// Unit tests of the page's pure modules (no browser): `npm test` (make test runs it).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { include: ["test/**/*.test.js"], environment: "node", pool: "threads", maxWorkers: 1 },
});
