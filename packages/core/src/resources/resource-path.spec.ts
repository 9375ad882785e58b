import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '../errors/app-error.js';
import { isInside, normalizeResourcePath } from './resource-path.js';

function refusal(path: string): ErrorCode | 'accepted' {
  try {
    normalizeResourcePath(path);
    return 'accepted';
  } catch (error) {
    return (error as AppError).code;
  }
}

describe(normalizeResourcePath.name, () => {
  it('accepts relative paths inside the skill and normalises them', () => {
    expect(normalizeResourcePath('references/REFERENCE.md')).toBe('references/REFERENCE.md');
    expect(normalizeResourcePath('./references//a.md')).toBe('references/a.md');
    expect(normalizeResourcePath('references/../assets/x.json')).toBe('assets/x.json');
    expect(normalizeResourcePath('assets\\x.json')).toBe('assets/x.json');
  });

  it.each([
    ['../x', ErrorCode.RESOURCE_OUTSIDE_SKILL],
    ['..', ErrorCode.RESOURCE_OUTSIDE_SKILL],
    ['a/../../x', ErrorCode.RESOURCE_OUTSIDE_SKILL],
    ['references/../../../config.toml', ErrorCode.RESOURCE_OUTSIDE_SKILL],
    ['..\\..\\x', ErrorCode.RESOURCE_OUTSIDE_SKILL],
    ['/etc/passwd', ErrorCode.RESOURCE_OUTSIDE_SKILL],
    ['C:\\x', ErrorCode.RESOURCE_OUTSIDE_SKILL],
    ['c:/windows/win.ini', ErrorCode.RESOURCE_OUTSIDE_SKILL],
    ['\\\\server\\share', ErrorCode.RESOURCE_OUTSIDE_SKILL],
    ['refs/a\0.md', ErrorCode.RESOURCE_OUTSIDE_SKILL],
    ['', ErrorCode.VALIDATION_FAILED],
    ['   ', ErrorCode.VALIDATION_FAILED],
  ])('refuses %j with %s', (path, code) => {
    expect(refusal(path)).toBe(code);
  });

  it('says what to do instead', () => {
    expect(() => normalizeResourcePath('/etc/passwd')).toThrow(
      "Resource path '/etc/passwd' is absolute; give a path relative to the skill folder",
    );
  });
});

describe(isInside.name, () => {
  it('accepts the root and paths below it, not siblings sharing a prefix', () => {
    expect(isInside('/s/skill', '/s/skill')).toBe(true);
    expect(isInside('/s/skill', '/s/skill/a/b')).toBe(true);
    expect(isInside('/s/skill', '/s/skill-evil/a')).toBe(false);
    expect(isInside('/s/skill', '/s')).toBe(false);
  });
});
