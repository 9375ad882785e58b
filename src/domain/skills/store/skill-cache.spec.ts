import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { SkillCache } from './skill-cache.js';
import { contentDigest, versionOf } from '@skillhost/core';

describe(SkillCache.name, () => {
  const directory = mkdtempSync(join(tmpdir(), 'skillhost-cache-'));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));
  const sut = new SkillCache(directory);
  const files = [
    { path: 'SKILL.md', bytes: Buffer.from('---\nname: x\ndescription: y\n---\nBody.\n') },
    { path: 'references/a.md', bytes: Buffer.from('A') },
  ];
  const version = versionOf(files);
  const contents = async () => new Map(files.map((file) => [contentDigest(file.bytes), file.bytes]));

  it('unpacks a version once, into <digest>/<name>, each file as stored', async () => {
    const folder = await sut.materialise(version.digest, 'plain', version.files, contents);
    expect(folder).toBe(join(directory, version.digest.slice('sha256:'.length), 'plain'));
    expect(readFileSync(join(folder, 'references/a.md'), 'utf8')).toBe('A');
    expect(await sut.materialise(version.digest, 'plain', version.files, async () => new Map())).toBe(folder);
  });

  it.each(['video-sdk/linux', '..', '.', 'a\\b', '50%'])(
    "gives a name that is no plain folder name (%s) one folder inside the version's",
    async (name) => {
      const folder = await sut.materialise(version.digest, name, version.files, contents);
      expect(dirname(folder)).toBe(join(directory, version.digest.slice('sha256:'.length)));
      expect(existsSync(join(folder, 'SKILL.md'))).toBe(true);
      expect(sut.has(version.digest, name)).toBe(true);
    },
  );

  it('refuses content that does not match its digest, leaving nothing behind', async () => {
    const other = versionOf([{ path: 'SKILL.md', bytes: Buffer.from('other') }]);
    await expect(
      sut.materialise(
        other.digest,
        'tampered',
        other.files,
        async () => new Map([[other.files[0].digest, Buffer.from('not it')]]),
      ),
    ).rejects.toThrow(/no intact content/);
    expect(sut.has(other.digest, 'tampered')).toBe(false);
  });
});
