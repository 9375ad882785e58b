import { describe, expect, it } from '@jest/globals';
import { configWith } from '../../config/config-loader.js';
import { oauthAddresses } from './oauth-issuer.js';

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
