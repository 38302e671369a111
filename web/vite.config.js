// Built into the Python package: `make install` runs `npm ci && npm run build`, and the
// server serves the result at / (assets under /static/app/). Nothing is fetched at run
// time: every asset is a file of this build (the page works offline), and nothing is
// inlined into the HTML (the Content-Security-Policy allows only this server's files).
import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";

export default defineConfig({
  plugins: [svelte()],
  base: "/static/app/",
  build: {
    outDir: "../src/loomdb/server/static/app",
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 1000,
  },
});
