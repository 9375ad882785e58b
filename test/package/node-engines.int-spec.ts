import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import semver from 'semver';

/**
 * `npm ci` on the Node version the README asks for prints no EBADENGINE warning: every package in
 * the lock accepts the lowest Node the project's own `engines` allows.
 */
describe('the dependencies and the Node version the README names', () => {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
    packages: Record<string, { engines?: { node?: string } | string[]; optional?: boolean }>;
  };
  const lowest = semver.minVersion(manifest.engines.node)!.version;

  it(`every locked package accepts Node ${lowest}`, () => {
    const refusing = Object.entries(lock.packages)
      .filter(
        ([location, entry]) => location !== '' && !Array.isArray(entry.engines) && entry.engines?.node !== undefined,
      )
      .filter(([, entry]) => !semver.satisfies(lowest, (entry.engines as { node: string }).node))
      .map(([location, entry]) => `${location} wants node ${(entry.engines as { node: string }).node}`);
    expect(refusing).toEqual([]);
  });

  it('the README names the same Node version', () => {
    expect(readFileSync('README.md', 'utf8')).toContain(`Node ${manifest.engines.node.replace('>=', '')}`);
  });
});
