import { describe, expect, it } from '@jest/globals';
import { configWith } from '../../config/config-loader.js';
import { oauthAddresses } from './oauth-issuer.js';
import { fetchableClientId } from './oauth-server.service.js';

describe(oauthAddresses.name, () => {
  it('defaults to http://HOST:PORT on loopback, and names the /mcp resource and its metadata', () => {
    expect(oauthAddresses(configWith({ 'app.port': 3000 }))).toEqual({
      issuer: 'http://127.0.0.1:3000',
      resource: 'http://127.0.0.1:3000/mcp',
      resourceMetadata: 'http://127.0.0.1:3000/.well-known/oauth-protected-resource/mcp',
    });
    expect(oauthAddresses(configWith({ 'app.host': '::1', 'app.port': 3000 })).issuer).toBe('http://[::1]:3000');
  });

  it('takes the configured origin (a trailing slash dropped) and refuses a path or a guess off loopback', () => {
    const configured = configWith({ 'app.host': '0.0.0.0', 'app.auth.oauth.issuer': 'https://skills.example.com/' });
    expect(oauthAddresses(configured).resource).toBe('https://skills.example.com/mcp');
    expect(() => oauthAddresses(configWith({ 'app.host': '0.0.0.0' }))).toThrow('issuer is empty');
    expect(() => oauthAddresses(configWith({ 'app.port': 0 }))).toThrow('issuer is empty');
    expect(() => oauthAddresses(configWith({ 'app.auth.oauth.issuer': 'https://example.com/skills' }))).toThrow(
      'must be an origin',
    );
    expect(() => oauthAddresses(configWith({ 'app.auth.oauth.issuer': 'ftp://example.com' }))).toThrow(
      'must be an origin',
    );
  });
});

describe(fetchableClientId.name, () => {
  it('fetches client metadata from public names only, never from an address or localhost', () => {
    expect(fetchableClientId('https://app.example.com/oauth/client.json')).toBe(true);
    for (const refused of [
      'https://127.0.0.1/c.json',
      'https://10.0.0.1/c.json',
      'https://[::1]/c.json',
      'https://[fe80::1]/c.json',
      'https://localhost/c.json',
      'https://api.localhost/c.json',
      'https://intranet/c.json',
      'not a url',
    ])
      expect([refused, fetchableClientId(refused)]).toEqual([refused, false]);
  });
});
