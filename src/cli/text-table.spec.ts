import { describe, expect, it } from '@jest/globals';
import { formatInstant, formatTable, printable } from './text-table.js';

describe('formatTable', () => {
  it('pads every column but the last to its widest cell', () => {
    expect(
      formatTable(
        ['NAME', 'ROLE', 'ID'],
        [
          ['alice', 'member', '1'],
          ['bo', 'admin', '22'],
        ],
      ),
    ).toEqual(['NAME   ROLE    ID', 'alice  member  1', 'bo     admin   22']);
  });

  it('prints the header alone when there are no rows', () => {
    expect(formatTable(['ID', 'USER'], [])).toEqual(['ID  USER']);
  });

  it('escapes control characters, so a label cannot break the columns or drive the terminal', () => {
    expect(formatTable(['LABEL', 'X'], [['a\nb\u001b[31m', 'x']])).toEqual([
      `${'LABEL'.padEnd(18)}  X`,
      'a\\u000ab\\u001b[31m  x',
    ]);
  });
});

describe('formatInstant', () => {
  it('shows a timestamp to the second in UTC, and - for none', () => {
    expect(formatInstant(new Date('2030-01-02T03:04:05.678Z'))).toBe('2030-01-02T03:04:05Z');
    expect(formatInstant(null)).toBe('-');
  });
});

describe('printable', () => {
  it('leaves ordinary text, including non-ASCII, as it is', () => {
    expect(printable('laptop — café')).toBe('laptop — café');
    expect(printable('\u0085')).toBe('\\u0085');
  });
});
