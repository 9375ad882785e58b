import { describe, expect, it } from '@jest/globals';
import { DECORATORS } from '@nestjs/swagger';
import { ErrorCode } from '@skillhost/core';
import { ErrorBodyDto } from '../dto/error-body.dto.js';
import { ApiErrors, declaredErrorCodes, errorResponses } from './api-errors.decorator.js';

const codesIn = (response: unknown) =>
  (
    response as {
      content: { 'application/json': { schema: { allOf: [unknown, { properties: { code: { enum: string[] } } }] } } };
    }
  ).content['application/json'].schema.allOf[1].properties.code.enum;

describe(errorResponses.name, () => {
  it('groups codes by their HTTP status, each response narrowing the error body to its codes', () => {
    const sut = errorResponses([
      ErrorCode.CHAT_NOT_FOUND,
      ErrorCode.UNAUTHENTICATED,
      ErrorCode.SKILLS_DISABLED,
      ErrorCode.MODEL_NOT_CONFIGURED,
      ErrorCode.DATABASE_UNAVAILABLE,
    ]);
    expect(Object.keys(sut)).toEqual(['401', '404', '503']);
    expect(codesIn(sut[404])).toEqual(['CHAT_NOT_FOUND', 'SKILLS_DISABLED']);
    expect(codesIn(sut[503])).toEqual(['DATABASE_UNAVAILABLE', 'MODEL_NOT_CONFIGURED']);
    expect(sut[404].content!['application/json'].schema).toMatchObject({
      allOf: [{ $ref: '#/components/schemas/ErrorBodyDto' }, { type: 'object' }],
    });
  });

  it('describes each code at its status, and the 401 with its www-authenticate header', () => {
    const sut = errorResponses([ErrorCode.USER_NAME_TAKEN, ErrorCode.UNAUTHENTICATED, ErrorCode.USER_NAME_TAKEN]);
    expect(sut[409].description).toBe('`USER_NAME_TAKEN`: a user with that name already exists');
    expect(codesIn(sut[409])).toEqual(['USER_NAME_TAKEN']);
    expect(sut[401].headers).toHaveProperty('www-authenticate');
    expect(sut[409].headers).toBeUndefined();
  });

  it('answers nothing for no codes', () => {
    expect(errorResponses([])).toEqual({});
  });
});

describe(ApiErrors.name, () => {
  class Sample {
    @ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.RESOURCE_BINARY)
    @ApiErrors(ErrorCode.RESOURCE_NOT_FOUND)
    handler() {}
  }

  it('records every code it is given, across repeated use, and documents them as swagger responses', () => {
    expect(declaredErrorCodes(Sample.prototype.handler).sort()).toEqual([
      'RESOURCE_BINARY',
      'RESOURCE_NOT_FOUND',
      'SKILL_NOT_FOUND',
    ]);
    const responses = Reflect.getMetadata(DECORATORS.API_RESPONSE, Sample.prototype.handler) as Record<string, unknown>;
    expect(Object.keys(responses).sort()).toEqual(['404', '415']);
    expect(Reflect.getMetadata(DECORATORS.API_EXTRA_MODELS, Sample.prototype.handler)).toContain(ErrorBodyDto);
  });
});
