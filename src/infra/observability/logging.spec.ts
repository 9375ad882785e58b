import { describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import { isoTimeOncePerMs, loggerOptions, requestIdFor, resolveLogFormat } from './logging.js';

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
  it('uses the configured level and redacts credentials at the top of a line and in headers', () => {
    const options = loggerOptions({ level: 'debug' }, 'json');
    const lines: string[] = [];
    const logger = pino(options, { write: (line: string) => void lines.push(line) });

    logger.info({ key: 'skh_1', apiKey: 'skh_2', authorization: 'Bearer skh_3', headers: { cookie: 'c' } }, 'x');
    logger.info({ req: { headers: { authorization: 'Bearer skh_4', 'x-api-key': 'skh_5' } } }, 'y');

    expect(options.level).toBe('debug');
    expect(lines.join('')).not.toMatch(/skh_|"c"/);
    expect(JSON.parse(lines[0])).toMatchObject({ key: '[redacted]', apiKey: '[redacted]', time: expect.any(String) });
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

describe(isoTimeOncePerMs.name, () => {
  it("is pino's ISO time field, for this millisecond", () => {
    const before = Date.now();
    const time = JSON.parse(`{${isoTimeOncePerMs().slice(1)}}`).time as string;

    expect(new Date(time).toISOString()).toBe(time);
    expect(Date.parse(time)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(time)).toBeLessThanOrEqual(Date.now());
  });
});
