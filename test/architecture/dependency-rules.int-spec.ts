import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';

/**
 * The import rules of .dependency-cruiser.cjs, checked on every `npm test`: a violation that is not
 * in .dependency-cruiser-known-violations.json (today's, being worked off) fails the run. Known
 * violations are matched here by rule, source and target, for folder cycles too, which
 * dependency-cruiser's own `--ignore-known` does not match.
 */

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

const key = ({ rule, from, to }: Violation) => `${rule.name}: ${from} → ${to}`;

async function cruise(): Promise<{ violations: Violation[]; totalCruised: number }> {
  const { stdout } = await promisify(execFile)(
    'node_modules/.bin/depcruise',
    ['src', 'packages', 'test', 'bench', 'tools', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
    {
      maxBuffer: 256 * 1024 * 1024,
    },
  ).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  return (JSON.parse(stdout) as { summary: { violations: Violation[]; totalCruised: number } }).summary;
}

describe('import rules (dependency-cruiser)', () => {
  it('no import breaks a rule, except the violations known today', async () => {
    const known = new Set(
      (JSON.parse(readFileSync('.dependency-cruiser-known-violations.json', 'utf8')) as Violation[]).map(key),
    );
    const { violations, totalCruised } = await cruise();
    // It read the tree (a cruise that found no files would find no violations either).
    expect(totalCruised).toBeGreaterThan(300);
    const found = violations.map(key);
    // New ones are listed with their rule: see the rule's comment in .dependency-cruiser.cjs.
    expect(found.filter((violation) => !known.has(violation))).toEqual([]);
    // One fixed: take it off the list (`npm run deps:baseline`), so that it cannot come back.
    expect([...known].filter((violation) => !found.includes(violation))).toEqual([]);
  }, 180_000);
});
