import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';

/**
 * The house rules dependency-cruiser cannot see, because they are about what a file does rather
 * than what it imports: only src/config reads the environment, and no Nest module but config's is
 * global (a global module hides who depends on it).
 */
function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.ts$/.test(entry.name) && !/\.(spec|d)\.ts$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name));
}

const shipped = [
  ...sourceFiles('src'),
  ...readdirSync('packages').flatMap((name) => sourceFiles(join('packages', name, 'src'))),
];

describe('house rules', () => {
  it('reads the files that ship (the server and every package)', () => {
    expect(shipped.length).toBeGreaterThan(200);
  });

  it('only src/config reads process.env', () => {
    const readers = shipped.filter(
      (file) => !file.startsWith('src/config/') && /\bprocess\.env\b/.test(readFileSync(file, 'utf8')),
    );
    expect(readers).toEqual([]);
  });

  it('no Nest module is @Global() but the configuration', () => {
    const globals = shipped.filter(
      (file) => !file.startsWith('src/config/') && /@Global\(\)/.test(readFileSync(file, 'utf8')),
    );
    expect(globals).toEqual([]);
  });
});
