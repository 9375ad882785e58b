import { describe, expect, it } from '@jest/globals';
import { validateFrontmatter } from './skill-validator.js';

const ALLOWED = "['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name']";
const valid = (overrides: Record<string, unknown> = {}) => ({
  name: 'my-skill',
  description: 'Does things.',
  ...overrides,
});

describe(validateFrontmatter.name, () => {
  it('accepts a minimal valid skill with no errors or warnings', () => {
    const sut = validateFrontmatter(valid(), 'my-skill', 'standard');
    expect(sut).toEqual({
      errors: [],
      warnings: [],
      frontmatter: { name: 'my-skill', description: 'Does things.' },
      catalogueDescription: 'Does things.',
    });
  });

  it('reports missing name and description with the reference messages', () => {
    expect(validateFrontmatter({}, 'x', 'standard').errors).toEqual([
      'Missing required field in frontmatter: name',
      'Missing required field in frontmatter: description',
    ]);
  });

  describe('name', () => {
    const errorsFor = (name: unknown, dir = typeof name === 'string' ? name : 'dir') =>
      validateFrontmatter(valid({ name }), dir, 'standard').errors;

    it('accepts 64 characters and rejects 65', () => {
      expect(errorsFor('a'.repeat(64))).toEqual([]);
      expect(errorsFor('a'.repeat(65))).toEqual([
        `Skill name '${'a'.repeat(65)}' exceeds 64 character limit (65 chars)`,
      ]);
    });

    it('must be a non-empty string', () => {
      expect(errorsFor('')).toEqual(["Field 'name' must be a non-empty string"]);
      expect(errorsFor('   ', 'x')).toEqual(["Field 'name' must be a non-empty string"]);
      expect(errorsFor(null, 'x')).toEqual(["Field 'name' must be a non-empty string"]);
      expect(errorsFor({ a: 'b' }, 'x')).toEqual(["Field 'name' must be a non-empty string"]);
    });

    it('must be lowercase', () => {
      expect(errorsFor('My-Skill')).toEqual(["Skill name 'My-Skill' must be lowercase"]);
    });

    it('cannot start or end with a hyphen, or hold consecutive hyphens', () => {
      expect(errorsFor('-a')).toEqual(['Skill name cannot start or end with a hyphen']);
      expect(errorsFor('a-')).toEqual(['Skill name cannot start or end with a hyphen']);
      expect(errorsFor('a--b')).toEqual(['Skill name cannot contain consecutive hyphens']);
    });

    it('allows only letters, digits and hyphens, including Unicode ones', () => {
      expect(errorsFor('my_skill')).toEqual([
        "Skill name 'my_skill' contains invalid characters. Only letters, digits, and hyphens are allowed.",
      ]);
      expect(errorsFor('my skill')).toEqual([
        "Skill name 'my skill' contains invalid characters. Only letters, digits, and hyphens are allowed.",
      ]);
      expect(errorsFor('技能')).toEqual([]);
      expect(errorsFor('мой-навык')).toEqual([]);
      expect(errorsFor('skill2')).toEqual([]);
    });

    it('is trimmed and NFKC-normalised before the checks, on both sides of the directory match', () => {
      // U+FB01 (the "ﬁ" ligature) is NFKC-equal to "fi".
      expect(validateFrontmatter(valid({ name: '  ﬁle-tool ' }), 'file-tool', 'standard')).toMatchObject({
        errors: [],
        frontmatter: { name: 'file-tool' },
      });
      expect(validateFrontmatter(valid({ name: 'file-tool' }), 'ﬁle-tool', 'standard').errors).toEqual([]);
    });

    it('counts code points, not UTF-16 units', () => {
      expect(errorsFor('𝒶'.repeat(64))).not.toContainEqual(expect.stringContaining('exceeds'));
    });

    it('must equal the directory name, case-sensitively', () => {
      expect(validateFrontmatter(valid({ name: 'a' }), 'b', 'standard').errors).toEqual([
        "Directory name 'b' must match skill name 'a'",
      ]);
      expect(validateFrontmatter(valid({ name: 'a' }), 'A', 'standard').errors).toEqual([
        "Directory name 'A' must match skill name 'a'",
      ]);
    });
  });

  describe('description', () => {
    const errorsFor = (description: unknown) =>
      validateFrontmatter(valid({ description }), 'my-skill', 'standard').errors;

    it('accepts 1024 code points and rejects 1025', () => {
      expect(errorsFor('d'.repeat(1024))).toEqual([]);
      expect(errorsFor('d'.repeat(1025))).toEqual(['Description exceeds 1024 character limit (1025 chars)']);
      expect(errorsFor('😀'.repeat(1024))).toEqual([]);
    });

    it('must be a non-empty string; whitespace-only fails', () => {
      expect(errorsFor('')).toEqual(["Field 'description' must be a non-empty string"]);
      expect(errorsFor(' \n\t ')).toEqual(["Field 'description' must be a non-empty string"]);
      expect(errorsFor(null)).toEqual(["Field 'description' must be a non-empty string"]);
      expect(errorsFor(['a'])).toEqual(["Field 'description' must be a non-empty string"]);
    });
  });

  describe('compatibility', () => {
    const errorsFor = (compatibility: unknown) =>
      validateFrontmatter(valid({ compatibility }), 'my-skill', 'standard').errors;

    it('accepts 500 characters and rejects 501', () => {
      expect(errorsFor('c'.repeat(500))).toEqual([]);
      expect(errorsFor('c'.repeat(501))).toEqual(['Compatibility exceeds 500 character limit (501 chars)']);
    });

    it('must be a string', () => {
      expect(errorsFor(['node'])).toEqual(["Field 'compatibility' must be a string"]);
    });
  });

  describe('unknown fields', () => {
    const message = `Unexpected fields in frontmatter: author, version. Only ${ALLOWED} are allowed.`;

    it('are an error in strict mode', () => {
      expect(validateFrontmatter(valid({ version: '1', author: 'me' }), 'my-skill', 'strict')).toMatchObject({
        errors: [message],
        warnings: [],
      });
    });

    it('are a warning in standard and lenient modes, and kept in the frontmatter', () => {
      for (const mode of ['standard', 'lenient'] as const) {
        const sut = validateFrontmatter(valid({ version: '1', author: 'me' }), 'my-skill', mode);
        expect(sut).toMatchObject({ errors: [], warnings: [message], frontmatter: { version: '1', author: 'me' } });
      }
    });
  });

  describe('metadata and string fields', () => {
    it('keeps a string map as it is', () => {
      const sut = validateFrontmatter(valid({ metadata: { author: 'me', version: '1.0' } }), 'my-skill', 'strict');
      expect(sut).toMatchObject({
        errors: [],
        warnings: [],
        frontmatter: { metadata: { author: 'me', version: '1.0' } },
      });
    });

    it('turns non-string values into their JSON text with a warning', () => {
      const sut = validateFrontmatter(
        valid({ metadata: { tags: ['a', 'b'], nested: { x: '1' } } }),
        'my-skill',
        'standard',
      );
      expect(sut.frontmatter?.metadata).toEqual({ tags: '["a","b"]', nested: '{"x":"1"}' });
      expect(sut.warnings).toEqual([
        'metadata.tags is not a string; stored as its JSON text',
        'metadata.nested is not a string; stored as its JSON text',
      ]);
    });

    it('ignores a metadata that is not a mapping, with a warning', () => {
      const sut = validateFrontmatter(valid({ metadata: 'text' }), 'my-skill', 'standard');
      expect(sut.frontmatter).not.toHaveProperty('metadata');
      expect(sut.warnings).toEqual(["Field 'metadata' must be a mapping of strings to strings; it was ignored"]);
    });

    it('joins an allowed-tools list with spaces, with a warning', () => {
      const sut = validateFrontmatter(valid({ 'allowed-tools': ['Bash(git:*)', 'Read'] }), 'my-skill', 'standard');
      expect(sut.frontmatter?.['allowed-tools']).toBe('Bash(git:*) Read');
      expect(sut.warnings).toHaveLength(1);
    });
  });

  describe('lenient mode', () => {
    it('loads a name/directory mismatch with a warning', () => {
      const sut = validateFrontmatter(valid({ name: 'a' }), 'b', 'lenient');
      expect(sut).toMatchObject({
        errors: [],
        warnings: ["Directory name 'b' must match skill name 'a'"],
        frontmatter: { name: 'a' },
      });
    });

    it('loads an over-long name and description, cutting the catalogue description to 1024', () => {
      const sut = validateFrontmatter(
        valid({ name: 'n'.repeat(70), description: 'd'.repeat(1100) }),
        'n'.repeat(70),
        'lenient',
      );
      expect(sut.errors).toEqual([]);
      expect(sut.warnings).toEqual([
        `Skill name '${'n'.repeat(70)}' exceeds 64 character limit (70 chars)`,
        'Description exceeds 1024 character limit (1100 chars)',
      ]);
      expect(sut.catalogueDescription).toHaveLength(1024);
      expect(sut.frontmatter?.description).toHaveLength(1100);
    });

    it('falls back to the directory name when the name is missing', () => {
      const sut = validateFrontmatter({ description: 'x' }, 'folder', 'lenient');
      expect(sut).toMatchObject({ errors: [], frontmatter: { name: 'folder' } });
      expect(sut.warnings).toEqual([
        'Missing required field in frontmatter: name',
        "Using the directory name 'folder' as the skill name",
      ]);
    });

    it('still skips a missing or empty description', () => {
      expect(validateFrontmatter({ name: 'a' }, 'a', 'lenient').errors).toEqual([
        'Missing required field in frontmatter: description',
      ]);
      expect(validateFrontmatter({ name: 'a', description: ' ' }, 'a', 'lenient').errors).toEqual([
        "Field 'description' must be a non-empty string",
      ]);
    });

    it('standard mode rejects what lenient loads', () => {
      expect(validateFrontmatter(valid({ name: 'a' }), 'b', 'standard').frontmatter).toBeUndefined();
      expect(
        validateFrontmatter(valid({ description: 'd'.repeat(1025) }), 'my-skill', 'standard').frontmatter,
      ).toBeUndefined();
    });
  });
});
