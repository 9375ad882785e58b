import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

/**
 * tools/long-functions.mjs, the check that no function of the given folders is past a number of
 * lines: run on real files in a temp folder, as `npm test` will run it on the packages.
 */
const TOOL = resolve('tools/long-functions.mjs');

/** A function of `lines` lines (its signature and closing brace included), under `name`. */
function functionOf(name: string, lines: number): string {
  return [
    `export function ${name}(): number {`,
    '  let total = 0;',
    ...Array.from({ length: lines - 4 }, () => '  total++;'),
    '  return total;',
    '}',
  ].join('\n');
}

function run(...args: string[]) {
  const result = spawnSync(process.execPath, [TOOL, ...args], { encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('tools/long-functions.mjs', () => {
  let root: string;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'long-functions-'));
    mkdirSync(join(root, 'src', 'nested'), { recursive: true });
    writeFileSync(join(root, 'src', 'short.ts'), `${functionOf('atTheLimit', 60)}\n`);
    writeFileSync(
      join(root, 'src', 'nested', 'long.ts'),
      `/**\n * A doc comment is not counted.\n */\n${functionOf('pastTheLimit', 61)}\n`,
    );
    const method = [
      'export class Runner {',
      '  run(): void {',
      ...Array.from({ length: 70 }, () => '    this.step();'),
      '  }',
      '',
      '  step(): void {}',
      '}',
    ].join('\n');
    writeFileSync(join(root, 'src', 'nested', 'runner.ts'), `${method}\n`);
    writeFileSync(join(root, 'src', 'nested', 'long.spec.ts'), `${functionOf('aTest', 200)}\n`);
  });

  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('lists each function and method past the limit, longest first, and exits with 1', () => {
    const sut = run('--max', '60', join(root, 'src'));
    expect(sut.status).toBe(1);
    expect(sut.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/src\/nested\/runner\.ts:2 {2}Runner\.run {2}72 lines$/),
      expect.stringMatching(/src\/nested\/long\.ts:4 {2}pastTheLimit {2}61 lines$/),
    ]);
    expect(sut.stderr).toContain('2 functions over 60 lines in 3 files');
  });

  it('exits with 0 and prints nothing when every function is within the limit', () => {
    expect(run('--max', '72', join(root, 'src'))).toEqual({ status: 0, stdout: '', stderr: '' });
  });

  it('skips the files an --exclude pattern matches', () => {
    const sut = run('--max', '60', '--exclude', 'runner', join(root, 'src'));
    expect(sut.stdout).not.toContain('runner');
    expect(sut.stdout).toContain('pastTheLimit');
  });

  it('refuses a malformed limit, an unknown option or no path with its usage and exit code 2', () => {
    for (const args of [
      ['--max', 'sixty', 'src'],
      ['--maximum', '60', 'src'],
      ['--max', '60'],
    ]) {
      const sut = run(...args);
      expect(sut.status).toBe(2);
      expect(sut.stderr).toContain('usage: node tools/long-functions.mjs');
    }
  });

  it('finds none in the packages an app installs (packages/*/src)', () => {
    const sut = run('--max', '60', ...readdirSync('packages').map((name) => join('packages', name, 'src')));
    expect(sut).toEqual({ status: 0, stdout: '', stderr: '' });
  });
});
