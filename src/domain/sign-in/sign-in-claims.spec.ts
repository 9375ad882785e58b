import { describe, expect, it } from '@jest/globals';
import { CLAIM_LIMITS, readPersonClaims, userNameFrom } from './sign-in-claims.js';

const settings = { userClaim: 'preferred_username', groupsClaim: 'groups' };
const person = (claims: Record<string, unknown>) =>
  readPersonClaims({ sub: 'abc', preferred_username: 'Ada', ...claims }, settings);
const invalid = expect.objectContaining({ code: 'SIGN_IN_CLAIMS_INVALID' });

describe(readPersonClaims.name, () => {
  it('reads subject, name, a verified email (lower-cased) and the groups (each once)', () => {
    expect(person({ email: 'Ada@Example.com', email_verified: true, groups: ['eng', 'eng', 'ops'] })).toEqual({
      subject: 'abc',
      name: 'Ada',
      verifiedEmail: 'ada@example.com',
      groups: ['eng', 'ops'],
    });
  });

  it('ignores an email the provider does not vouch for, and groups when none are configured or sent', () => {
    expect(person({ email: 'ada@example.com', email_verified: 'true' }).verifiedEmail).toBeNull();
    expect(person({}).groups).toBeUndefined();
    expect(
      readPersonClaims({ sub: 'a', preferred_username: 'b', groups: 'x' }, { ...settings, groupsClaim: '' }).groups,
    ).toBeUndefined();
  });

  it.each([
    ['no name claim', { preferred_username: undefined }],
    ['a name that is not a string', { preferred_username: ['a'] }],
    ['an oversized subject', { sub: 's'.repeat(CLAIM_LIMITS.subjectChars + 1) }],
    ['a name with a control character', { preferred_username: 'a\u0000b' }],
    ['groups that are not strings', { groups: [1, 2] }],
    ['too many groups', { groups: Array.from({ length: CLAIM_LIMITS.groups + 1 }, (_, i) => `g${i}`) }],
    ['a huge group name', { groups: ['g'.repeat(CLAIM_LIMITS.groupChars + 1)] }],
    ['claims too large in all', { picture: 'x'.repeat(CLAIM_LIMITS.totalBytes) }],
  ])('refuses %s', (_, claims) => {
    expect(() => person(claims)).toThrow(invalid);
  });
});

describe(userNameFrom.name, () => {
  it('makes a user name of a display name or an email', () => {
    expect(userNameFrom('Ada Lovelace')).toBe('ada-lovelace');
    expect(userNameFrom('ada.l@example.com')).toBe('ada.l');
    expect(userNameFrom('José')).toBe('jose');
    expect(userNameFrom('x'.repeat(80))).toHaveLength(64);
  });

  it('answers undefined when nothing usable is left', () => {
    expect(userNameFrom('李')).toBeUndefined();
    expect(userNameFrom('---')).toBeUndefined();
  });
});
