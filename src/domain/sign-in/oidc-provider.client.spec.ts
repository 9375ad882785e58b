import { describe, expect, it } from '@jest/globals';
import { configWith } from '../../config/config-loader.js';
import { OidcProviderClient } from './oidc-provider.client.js';

const clientFor = (issuer: string, clientId = 'skillhost') =>
  new OidcProviderClient(configWith({ 'app.auth.oidc.issuer': issuer, 'app.auth.oidc.client_id': clientId }));

describe(OidcProviderClient.name, () => {
  it('is off without an issuer, and then refuses to sign in with SIGN_IN_NOT_CONFIGURED', async () => {
    const sut = clientFor('');
    expect(sut.enabled).toBe(false);
    await expect(
      sut.authorizationUrl({ redirectUri: 'http://127.0.0.1/cb', state: 's', nonce: 'n', codeChallenge: 'c' }),
    ).rejects.toMatchObject({ code: 'SIGN_IN_NOT_CONFIGURED' });
  });

  it('takes https issuers, and http only on a loopback address', () => {
    expect(clientFor('https://login.example.com/realms/team').enabled).toBe(true);
    expect(clientFor('http://127.0.0.1:8080').enabled).toBe(true);
    expect(() => clientFor('http://login.example.com')).toThrow(/https:\/\/ URL/);
    expect(() => clientFor('login.example.com')).toThrow(/must be a URL/);
  });

  it('refuses an issuer without a client id, saying which key to set', () => {
    expect(() => clientFor('https://login.example.com', ' ')).toThrow(/client_id is empty/);
  });
});
