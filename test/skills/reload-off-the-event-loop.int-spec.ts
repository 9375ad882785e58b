import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { configWith } from '../../src/config/config-loader.js';
import { discoverSkills, discoverSkillsAsync } from '@skillhost/core';
import { SkillRegistryService } from '@skillhost/nest';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { skillsSettingsOf } from '../../src/domain/skills/skills-settings-of.js';

/** A reload reads every skill folder with synchronous calls: it must give the event loop turns meanwhile. */
describe('reloading without stalling the event loop', () => {
  let tree: TempTree;
  const SKILLS = 1500;
  beforeAll(() => {
    tree = tempTree();
    for (let i = 0; i < SKILLS; i++) writeSkill(tree, 'skills', `skill-${String(i).padStart(4, '0')}`);
    writeSkill(tree, 'nested/group', 'deep-one');
    tree.write('skills/broken/SKILL.md', '---\nname: broken\n');
  });
  afterAll(() => tree.cleanup());

  const options = () => ({
    directories: [
      { configured: 'skills', path: tree.path('skills') },
      { configured: 'nested', path: tree.path('nested') },
    ],
    mode: 'standard' as const,
    maxDepth: 2,
    maxSkills: 10_000,
  });

  it(`${discoverSkillsAsync.name} finds exactly what ${discoverSkills.name} finds`, async () => {
    const sync = discoverSkills(options());
    const async = await discoverSkillsAsync(options());
    expect(async).toEqual(sync);
    expect(async.skills).toHaveLength(SKILLS + 1);
    expect(async.invalid.map((entry) => entry.path)).toEqual([tree.path('skills/broken')]);
  });

  it('lets timers and I/O callbacks run while it scans', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    try {
      await discoverSkillsAsync(options(), 1);
    } finally {
      clearInterval(timer);
    }
    // With the whole scan in one block no interval callback could run before it ended.
    expect(ticks).toBeGreaterThan(0);
  });

  it('runs a reload asked for during a reload once more after it, and joins any further asks to that one', async () => {
    const sut = new SkillRegistryService(
      skillsSettingsOf(
        configWith({
          'app.skills.enabled': true,
          'app.skills.directories': [tree.path('skills')],
          'app.skills.max_skills': 10_000,
        }),
      ),
    );
    await sut.onModuleInit();
    const first = sut.reload();
    writeSkill(tree, 'skills', 'zz-added-meanwhile');
    const second = sut.reload();
    const third = sut.reload();
    expect(third).toBe(second);
    expect(second).not.toBe(first);
    const [a, b] = await Promise.all([first, second]);
    expect(b.skills.has('zz-added-meanwhile')).toBe(true);
    expect(sut.snapshot).toBe(b);
    expect(a.skills.size).toBeGreaterThanOrEqual(SKILLS);
    // Settled: the next ask scans again.
    const next = sut.reload();
    expect(next).not.toBe(second);
    await next;
  });

  it('refuses while skills are disabled, as a rejected promise', async () => {
    const sut = new SkillRegistryService(skillsSettingsOf(configWith({ 'app.skills.enabled': false })));
    await expect(sut.reload()).rejects.toMatchObject({ code: 'SKILLS_DISABLED' });
  });
});
