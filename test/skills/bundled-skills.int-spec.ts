import { resolve } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import { configWith } from '../../src/config/config-loader.js';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { skillsSettingsOf } from '../../src/domain/skills/skills-settings-of.js';

describe('bundled skills', () => {
  const config = configWith(
    { 'app.skills.enabled': true, 'app.skills.directories': ['./skills'], 'app.skills.validation': 'strict' },
    resolve('.'),
  );
  const registry = new SkillRegistryService(skillsSettingsOf(config));
  void registry.onModuleInit(); // no store: the first scan is done before it returns
  const sut = new SkillResourcesService(registry, skillsSettingsOf(config));

  it('are all valid in strict mode', () => {
    expect(registry.snapshot.invalid).toEqual([]);
    expect([...registry.snapshot.skills.keys()]).toEqual(['code-review', 'git-commit', 'skills-system-validation']);
  });

  it('the conformance skill serves each marker and refuses ../../config.toml', async () => {
    expect((await sut.activate('skills-system-validation')).body).toContain('references/REFERENCE.md');
    expect((await sut.readResource('skills-system-validation', 'references/REFERENCE.md')).content).toContain(
      'MARKER: REF-7f3c9a1e-skills-reference',
    );
    expect(JSON.parse((await sut.readResource('skills-system-validation', 'assets/fixture.json')).content).marker).toBe(
      'ASSET-2b8d4e60-skills-fixture',
    );
    expect((await sut.readResource('skills-system-validation', 'scripts/echo.sh')).content).toContain(
      'SCRIPT-91e0c5d2-skills-echo',
    );
    const refusal = sut.readResource('skills-system-validation', '../../config.toml');
    await expect(refusal).rejects.toBeInstanceOf(AppError);
    await expect(refusal).rejects.toMatchObject({
      code: ErrorCode.RESOURCE_OUTSIDE_SKILL,
      message: "Resource path '../../config.toml' leaves the skill folder; '..' is not allowed.",
    });
  });
});
