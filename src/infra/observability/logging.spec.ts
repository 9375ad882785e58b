import { describe, expect, it } from '@jest/globals';
import { loggerOptions, requestIdFor, resolveLogFormat } from './logging.js';

describe(resolveLogFormat.name, () => {
  it('auto: pretty on a terminal, JSON anywhere else', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
  });

  it('an explicit format wins over the terminal', () => {
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });
});

describe(loggerOptions.name, () => {
  it('uses the configured level and redacts credentials wherever a call site puts them', () => {
    const options = loggerOptions({ level: 'debug' }, 'json');
    expect(options.level).toBe('debug');
    expect(options.redact).toMatchObject({
      paths: expect.arrayContaining(['req.headers.authorization', 'req.headers["x-api-key"]', 'apiKey', '*.key']),
    });
  });

  it('JSON lines name their level; the pretty printer gets pino numbers', () => {
    expect(loggerOptions({ level: 'info' }, 'json').formatters?.level?.('warn', 40)).toEqual({ level: 'warn' });
    expect(loggerOptions({ level: 'info' }, 'pretty').formatters).toBeUndefined();
  });
});

describe(requestIdFor.name, () => {
  const UUID = /^[0-9a-f-]{36}$/;

  it("keeps a caller's sensible x-request-id", () => {
    for (const id of ['abc', 'trace-1.2:3', '0af7651916cd43dd8448eb211c80319c', 'a/b+c=d@e_f'])
      expect(requestIdFor({ headers: { 'x-request-id': id } })).toBe(id);
  });

  it('replaces a missing, repeated, over-long or line-forging one with a new UUID', () => {
    for (const headers of [
      {},
      { 'x-request-id': '' },
      { 'x-request-id': ['a', 'b'] },
      { 'x-request-id': 'x'.repeat(129) },
      { 'x-request-id': 'a\nfake line' },
      { 'x-request-id': 'a b' },
      { 'x-request-id': '<script>' },
    ]) {
      expect(requestIdFor({ headers })).toMatch(UUID);
    }
    expect(requestIdFor({ headers: {} })).not.toBe(requestIdFor({ headers: {} }));
  });
});
