import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Skillhost's version from its package.json, found upwards from this file (`src/` in development, `dist/src/` built). */
export function packageVersion(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(folder, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'skillhost' && manifest.version) return manifest.version;
    }
    const parent = dirname(folder);
    if (parent === folder) return '0.0.0';
    folder = parent;
  }
}
