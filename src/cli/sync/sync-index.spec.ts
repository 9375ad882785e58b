import { describe, expect, it } from '@jest/globals';
import { skillDigest } from '../../domain/skills/store/index-skill-digest.js';
import { checkIndex, checkVersions, IndexRefused, pathProblem, type SyncCaps } from './sync-index.js';

const CAPS: SyncCaps = { fileBytes: 100, skillBytes: 150, skillFiles: 3 };
const SERVER = new URL('http://127.0.0.1:3000/');
const DIGEST = `sha256:${'a'.repeat(64)}`;

function file(path: string, overrides: Record<string, unknown> = {}) {
  return { path, digest: DIGEST, size: 10, url: `/.well-known/agent-skills/s/${path}`, ...overrides };
}

/** An index of the skills; a skill whose digest is DIGEST gets the one its files make, as an honest server's would. */
function index(skills: unknown[]): string {
  const honest = skills.map((skill) => {
    const entry = skill as { digest?: string; files?: unknown };
    if (entry.digest !== DIGEST || !Array.isArray(entry.files)) return skill;
    return { ...entry, digest: skillDigest(entry.files as { path: string; digest: string }[]) };
  });
  return JSON.stringify({ version: '0.2.0', skills: honest });
}

describe(checkIndex.name, () => {
  it('takes a well-formed skill, its URLs resolved on the server', () => {
    const sut = checkIndex(
      index([{ name: 's', digest: DIGEST, files: [file('SKILL.md'), file('a/b.md')] }]),
      SERVER,
      CAPS,
    );
    expect(sut.refused).toEqual([]);
    expect(sut.skills[0].files.map((f) => f.url.href)).toEqual([
      'http://127.0.0.1:3000/.well-known/agent-skills/s/SKILL.md',
      'http://127.0.0.1:3000/.well-known/agent-skills/s/a/b.md',
    ]);
  });

  it.each([
    ['a name that is no folder name', { name: '../x' }, 'not a plain folder name'],
    ['the lock file as a name', { name: 'skills-lock.json' }, 'not a plain folder name'],
    ['a bad digest', { digest: 'md5:1' }, 'its digest'],
    ['too many files', { files: [file('SKILL.md'), file('a'), file('b'), file('c')] }, 'at most 3'],
    ['too many bytes', { files: [file('SKILL.md', { size: 90 }), file('a', { size: 90 })] }, 'at most 150 per skill'],
    ['no SKILL.md', { files: [file('README.md')] }, 'no SKILL.md'],
    [
      'a file that is also a folder',
      { files: [file('SKILL.md'), file('a'), file('a/b')] },
      'as a file and as a folder',
    ],
    ['a path twice', { files: [file('SKILL.md'), file('SKILL.md')] }, 'listed twice'],
    ['another origin', { files: [file('SKILL.md', { url: 'http://evil.test/x' })] }, 'not on the server'],
    ['a protocol-relative URL', { files: [file('SKILL.md', { url: '//evil.test/x' })] }, 'not on the server'],
    ['a negative size', { files: [file('SKILL.md', { size: -1 })] }, 'not a byte count'],
    ["a digest its files' digests do not make", { digest: `sha256:${'b'.repeat(64)}` }, "files' digests make"],
  ])('refuses a skill with %s, and keeps the others', (_what, overrides, reason) => {
    const good = { name: 'good', digest: DIGEST, files: [file('SKILL.md')] };
    const sut = checkIndex(
      index([good, { name: 's', digest: DIGEST, files: [file('SKILL.md')], ...overrides }]),
      SERVER,
      CAPS,
    );
    expect(sut.skills.map((s) => s.name)).toEqual(['good']);
    expect(sut.refused).toEqual([{ name: expect.any(String), reason: expect.stringContaining(reason) }]);
  });

  it.each([
    ['not JSON', '{', 'not valid JSON'],
    ['no skills array', '{"version":"0.2.0"}', 'no "skills" array'],
    ['another version', '{"version":"1.0.0","skills":[]}', 'sync reads 0.2.x'],
  ])('refuses an index that is %s whole', (_what, text, reason) => {
    expect(() => checkIndex(text, SERVER, CAPS)).toThrow(IndexRefused);
    expect(() => checkIndex(text, SERVER, CAPS)).toThrow(reason);
  });
});

describe(pathProblem.name, () => {
  it.each([
    ['', 'empty'],
    ['/etc/passwd', 'absolute'],
    ['a\\b', 'backslash'],
    ['a//b', 'empty segment'],
    ['a/', 'empty segment'],
    ['../x', "'..'"],
    ['a/./b', "'..'"],
    ['caf\u00e9.md', 'printable ASCII'],
    ['a\u0000b', 'printable ASCII'],
  ])('refuses %j', (path, reason) => {
    expect(pathProblem(path)).toContain(reason);
  });

  it('takes a plain relative path', () => {
    expect(pathProblem('references/deep/more.md')).toBeUndefined();
  });
});

describe(checkVersions.name, () => {
  it("lists each skill's versions as checked entries, leaving out one that fails the checks", () => {
    const good = [file('SKILL.md', { url: '/.well-known/agent-skills/s@sha256:1/SKILL.md' })];
    const text = JSON.stringify({
      version: '0.2.0',
      skills: [
        {
          name: 's',
          current: skillDigest(good),
          versions: [
            { digest: skillDigest(good), version: { digest: DIGEST, number: 2 }, files: good },
            { digest: `sha256:${'c'.repeat(64)}`, version: { digest: DIGEST, number: 1 }, files: good },
            { digest: skillDigest(good), files: [file('SKILL.md', { url: 'http://evil.test/x' })] },
          ],
        },
      ],
    });
    const sut = checkVersions(text, SERVER, CAPS);
    expect([...sut.keys()]).toEqual(['s']);
    expect(sut.get('s')!.map((version) => [version.number, version.versionDigest])).toEqual([[2, DIGEST]]);
  });

  it('refuses a body that is no version list', () => {
    expect(() => checkVersions('{"skills":{}}', SERVER, CAPS)).toThrow(IndexRefused);
    expect(() => checkVersions('<html>', SERVER, CAPS)).toThrow('not valid JSON');
  });
});
