import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Package {
  root: string;
  version: string;
}

/**
 * Skillhost's own package: its folder and version, from the package.json found upwards from this file (`src/` in
 * development, `dist/src/` built).
 */
function skillhostPackage(): Package | undefined {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(folder, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'skillhost' && manifest.version) return { root: folder, version: manifest.version };
    }
    const parent = dirname(folder);
    if (parent === folder) return undefined;
    folder = parent;
  }
}

export function packageVersion(): string {
  return skillhostPackage()?.version ?? '0.0.0';
}

/** The folder of Skillhost's package.json (where `dist/` is built). */
export function packageRoot(): string | undefined {
  return skillhostPackage()?.root;
}
