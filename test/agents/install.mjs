#!/usr/bin/env node
/**
 * Installs the pinned agent CLIs of clients.json from the npm registry, each into its own folder
 * under `.agents/` (kept between runs; a folder already holding the pinned version is left alone).
 * A client with `"node": "22"` also gets the npm package `node@22`, which runs it (it needs Node 22).
 * `node test/agents/install.mjs [client…]` installs only those.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const AGENTS_DIR = resolve(here, '..', '..', '.agents');
const clients = JSON.parse(readFileSync(join(here, 'clients.json'), 'utf8'));

const wanted = process.argv.slice(2);
for (const unknown of wanted.filter((id) => !(id in clients))) {
  console.error(`Unknown client '${unknown}'; clients.json has ${Object.keys(clients).join(', ')}.`);
  process.exit(2);
}
for (const [id, client] of Object.entries(clients)) {
  if (wanted.length > 0 && !wanted.includes(id)) continue;
  const folder = join(AGENTS_DIR, id);
  const packages = [`${client.package}@${client.version}`, ...(client.node ? [`node@${client.node}`] : [])];
  const marker = join(folder, '.installed');
  if (existsSync(marker) && readFileSync(marker, 'utf8') === packages.join(' ')) continue;
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, 'package.json'), '{ "private": true }\n');
  console.log(`Installing ${packages.join(' and ')} into ${folder}`);
  // Install scripts run here (unlike the project's own npm ci): some CLIs fetch or link their binary in one.
  execFileSync(
    'npm',
    ['install', '--prefix', folder, '--no-audit', '--no-fund', '--foreground-scripts', '--save-exact', ...packages],
    { stdio: 'inherit', env: { ...process.env, npm_config_ignore_scripts: 'false' } },
  );
  writeFileSync(marker, packages.join(' '));
}
