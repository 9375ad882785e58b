#!/usr/bin/env node
// The `skillhost` command runs the compiled CLI; `npm ci` / `npm install` build it (the prepare script).
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('skillhost: not built yet; run `npm run build` in the Skillhost folder first.\n');
  process.exit(2);
}
await import(entry.href);
