import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@skillhost/core';
import { errorCodesOf, operationIdOf, type RouteFacts } from './route-rules.js';

const route = (overrides: Partial<RouteFacts> = {}): RouteFacts => ({
  isPublic: false,
  adminOnly: false,
  features: [],
  rateLimited: false,
  declaredCodes: [],
  ...overrides,
});
const noInput = { body: false, query: false };

describe(errorCodesOf.name, () => {
  it('a public route without input can only fail unexpectedly', () => {
    expect(errorCodesOf(route({ isPublic: true }), noInput)).toEqual([ErrorCode.INTERNAL]);
  });

  it('a keyed route needs a key, and the key look-up needs the database', () => {
    expect(errorCodesOf(route(), noInput).sort()).toEqual([
      ErrorCode.DATABASE_UNAVAILABLE,
      ErrorCode.INTERNAL,
      ErrorCode.UNAUTHENTICATED,
    ]);
  });

  it('an admin route can be forbidden', () => {
    expect(errorCodesOf(route({ adminOnly: true }), noInput)).toContain(ErrorCode.FORBIDDEN);
    expect(errorCodesOf(route(), noInput)).not.toContain(ErrorCode.FORBIDDEN);
  });

  it('a query can be invalid; a body can be invalid, too large or too slow', () => {
    const query = errorCodesOf(route(), { body: false, query: true });
    expect(query).toContain(ErrorCode.VALIDATION_FAILED);
    expect(query).not.toContain(ErrorCode.PAYLOAD_TOO_LARGE);
    expect(query).not.toContain(ErrorCode.REQUEST_TIMEOUT);
    expect(errorCodesOf(route(), { body: true, query: false })).toEqual(
      expect.arrayContaining([ErrorCode.VALIDATION_FAILED, ErrorCode.PAYLOAD_TOO_LARGE, ErrorCode.REQUEST_TIMEOUT]),
    );
    expect(errorCodesOf(route(), noInput)).not.toContain(ErrorCode.VALIDATION_FAILED);
  });

  it('each required feature adds its disabled code', () => {
    expect(errorCodesOf(route({ features: ['skills'] }), noInput)).toContain(ErrorCode.SKILLS_DISABLED);
    const both = errorCodesOf(route({ features: ['skills', 'tools'] }), noInput);
    expect(both).toEqual(expect.arrayContaining([ErrorCode.SKILLS_DISABLED, ErrorCode.TOOLS_DISABLED]));
  });

  it('a rate-limited route can answer RATE_LIMITED, public or not; a route exempt from the limits cannot', () => {
    expect(errorCodesOf(route({ rateLimited: true }), noInput)).toContain(ErrorCode.RATE_LIMITED);
    expect(errorCodesOf(route({ isPublic: true, rateLimited: true }), noInput)).toEqual([
      ErrorCode.INTERNAL,
      ErrorCode.RATE_LIMITED,
    ]);
    expect(errorCodesOf(route({ isPublic: true, rateLimited: false }), noInput)).not.toContain(ErrorCode.RATE_LIMITED);
  });

  it("keeps the route's own codes, once each", () => {
    const codes = errorCodesOf(
      route({ declaredCodes: [ErrorCode.CHAT_NOT_FOUND, ErrorCode.UNAUTHENTICATED] }),
      noInput,
    );
    expect(codes).toContain(ErrorCode.CHAT_NOT_FOUND);
    expect(codes.filter((code) => code === ErrorCode.UNAUTHENTICATED)).toHaveLength(1);
  });
});

describe(operationIdOf.name, () => {
  it('names an operation by its controller, without the suffix, and method', () => {
    expect(operationIdOf('AdminChatsController', 'list')).toBe('AdminChats_list');
  });
});
