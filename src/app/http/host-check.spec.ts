import { describe, expect, it } from '@jest/globals';
import { createHostCheck, hostnameOf } from './host-check.js';

describe(hostnameOf.name, () => {
  it.each([
    ['127.0.0.1:3000', '127.0.0.1'],
    ['LocalHost.:80', 'localhost'],
    ['[::1]:3000', '::1'],
    ['[::1]', '::1'],
    ['::1', '::1'],
    ['chat.example.com', 'chat.example.com'],
  ])('%s → %s', (host, expected) => {
    expect(hostnameOf(host)).toBe(expected);
  });
});

describe(createHostCheck.name, () => {
  describe('listening on 127.0.0.1', () => {
    const sut = createHostCheck({ listenHost: '127.0.0.1', allowedHosts: ['chat.internal', 'Box.Example:8080'] });

    it.each([
      '127.0.0.1:3000',
      'localhost:3000',
      'localhost',
      '127.0.0.2',
      '[::1]:3000',
      'chat.internal:3000',
      'box.example',
    ])('accepts %s', (host) => {
      expect(sut(host)).toBe(true);
    });

    it.each([
      ['a rebinding name', 'evil.example:3000'],
      ['a name ending in localhost', 'localhost.evil.example'],
      ['another machine', '10.0.0.5:3000'],
      ['no Host header', undefined],
      ['an empty Host header', ''],
    ])('refuses %s', (_label, host) => {
      expect(sut(host)).toBe(false);
    });
  });

  it('on a wildcard address accepts any IP address but still no foreign name', () => {
    for (const listenHost of ['0.0.0.0', '::']) {
      const sut = createHostCheck({ listenHost, allowedHosts: [] });
      expect(sut('192.168.1.20:3000')).toBe(true);
      expect(sut('[fe80::1]:3000')).toBe(true);
      expect(sut('evil.example')).toBe(false);
    }
  });

  it('accepts the configured name of a server listening on it', () => {
    const sut = createHostCheck({ listenHost: 'devbox.lan', allowedHosts: [] });
    expect(sut('devbox.lan:3000')).toBe(true);
    expect(sut('10.1.1.1')).toBe(false);
  });
});
