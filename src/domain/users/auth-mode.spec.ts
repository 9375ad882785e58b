import { describe, expect, it } from '@jest/globals';
import { effectiveAuthMode, isLoopbackHost } from './auth-mode.js';

describe(effectiveAuthMode.name, () => {
  it.each([
    ['auto', '127.0.0.1', 'none'],
    ['auto', 'localhost', 'none'],
    ['auto', '::1', 'none'],
    ['auto', '0.0.0.0', 'api_key'],
    ['auto', '::', 'api_key'],
    ['auto', '192.168.1.10', 'api_key'],
    ['api_key', '127.0.0.1', 'api_key'],
    ['none', '0.0.0.0', 'none'],
  ] as const)('%s on %s → %s', (mode, host, expected) => {
    expect(effectiveAuthMode(mode, host)).toBe(expected);
  });
});

describe(isLoopbackHost.name, () => {
  it.each(['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1'])(
    '%s is loopback',
    (host) => {
      expect(isLoopbackHost(host)).toBe(true);
    },
  );
  it.each(['0.0.0.0', '::', '10.0.0.1', 'example.com', '128.0.0.1', '::2', 'localhost.evil.com'])(
    '%s is not',
    (host) => {
      expect(isLoopbackHost(host)).toBe(false);
    },
  );
});
