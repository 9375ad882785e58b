import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import { Agent, fetch } from 'undici';
import { checkDestination, forbiddenReason, isAllowedHost, publicOnlyLookup } from './import-destination.js';

describe('import destinations', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    // What the URL parser makes of http://[::ffff:127.0.0.1]/.
    ['::ffff:7f00:1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['::ffff:10.0.0.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['fe80::1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
  ])('%s is %s: a member may not reach it', (address, reason) => {
    expect(forbiddenReason(address)).toBe(reason);
  });

  it.each(['8.8.8.8', '172.32.0.1', '192.169.0.1', '2606:4700::1111', '203.0.113.5'])('%s is public', (address) => {
    expect(forbiddenReason(address)).toBeUndefined();
  });

  it.each([
    ['git.internal', 443, ['git.internal'], true],
    ['GIT.internal', 8443, ['git.internal'], true],
    ['git.internal', 8443, ['git.internal:8443'], true],
    ['git.internal', 443, ['git.internal:8443'], false],
    ['a.corp.example', 443, ['*.corp.example'], true],
    ['a.b.corp.example', 443, ['*.corp.example'], true],
    ['corp.example', 443, ['*.corp.example'], false],
    ['evilcorp.example', 443, ['*.corp.example'], false],
    ['[::1]', 8080, ['[::1]:8080'], true],
    ['[::1]', 80, ['[::1]'], true],
    ['[::1]', 80, ['[::1]:8080'], false],
    ['127.0.0.1', 80, [], false],
  ] as const)('%s:%d with member_hosts %j is allowed: %s', (host, port, allowed, expected) => {
    expect(isAllowedHost(host, port, allowed)).toBe(expected);
  });

  it('checks a listed host not at all, an address literal without DNS, and refuses a private one', async () => {
    const policy = { allowedHosts: ['127.0.0.1:8080'] };
    expect(await checkDestination(new URL('http://127.0.0.1:8080/x'), policy)).toBeUndefined();
    expect(await checkDestination(new URL('https://203.0.113.5/x'), policy)).toEqual({
      host: '203.0.113.5',
      port: 443,
      addresses: ['203.0.113.5'],
    });
    await expect(checkDestination(new URL('http://[fd00::7]/x'), policy)).rejects.toMatchObject({
      code: ErrorCode.IMPORT_SOURCE_FORBIDDEN,
      details: { host: '[fd00::7]', reason: 'private' },
      adminDetails: { address: 'fd00::7' },
    });
    expect(await checkDestination(new URL('http://127.0.0.1/x'), undefined)).toBeUndefined();
  });

  describe('at connect time (DNS rebinding)', () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((_req, res) => res.end('secret'));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('refuses the connection when the name resolves to a loopback address as it is made', async () => {
      const dispatcher = new Agent({ connect: { lookup: publicOnlyLookup } });
      try {
        const failure = await fetch(`http://localhost:${port}/`, { dispatcher }).then(
          () => undefined,
          (error: { cause?: unknown }) => error.cause,
        );
        expect(AppError.isInstance(failure)).toBe(true);
        expect(failure).toMatchObject({ code: ErrorCode.IMPORT_SOURCE_FORBIDDEN, details: { host: 'localhost' } });
      } finally {
        await dispatcher.close();
      }
      // The same server without the guard answers: the refusal is the lookup's.
      expect(await (await fetch(`http://localhost:${port}/`)).text()).toBe('secret');
    });
  });
});
