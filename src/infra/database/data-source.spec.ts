import { describe, expect, it } from '@jest/globals';
import { redactDatabaseUrl } from './data-source.js';

describe(redactDatabaseUrl.name, () => {
  it('keeps user, host, port and database, drops the password', () => {
    expect(redactDatabaseUrl('postgres://app:s3cret@db.internal:5432/skillhost')).toBe(
      'postgres://app@db.internal:5432/skillhost',
    );
    expect(redactDatabaseUrl('postgres://postgres@127.0.0.1:5432/test')).toBe(
      'postgres://postgres@127.0.0.1:5432/test',
    );
  });

  it('never echoes a URL it cannot parse (it may hold a password)', () => {
    expect(redactDatabaseUrl('not a url :secret@')).toBe('(unparseable database URL)');
  });
});
