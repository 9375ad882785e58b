import type { AppConfig } from '../../config/app-config.js';
import { isLoopbackHost } from '../../domain/users/auth-mode.js';

/** Where MCP clients find the OAuth server and the resource its tokens are for. */
export interface OAuthAddresses {
  /** The authorization server's issuer: the public origin, no path (RFC 8414 metadata at the root). */
  issuer: string;
  /** The protected resource, `ISSUER/mcp`: every access token is bound to it (RFC 8707). */
  resource: string;
  /** The resource's metadata (RFC 9728), which a 401 from `/mcp` points to. */
  resourceMetadata: string;
}

/**
 * The issuer from `[app.auth.oauth] issuer`, else `http://HOST:PORT` for a server on loopback. A server others reach
 * must be told its public origin: a token names it, and a guess from the `Host` header would let any caller choose it.
 */
export function oauthAddresses(config: AppConfig): OAuthAddresses {
  const { host, port, auth } = config.app;
  let issuer = auth.oauth.issuer.replace(/\/+$/, '');
  if (issuer === '') {
    if (!isLoopbackHost(host) || port === 0)
      throw new Error(
        `[app.auth.oauth] issuer is empty while the server listens on ${host}:${port}: set it to the origin MCP ` +
          'clients reach this server at (e.g. https://skills.example.com), or SKILLHOST_AUTH_OAUTH_ISSUER.',
      );
    issuer = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }
  const url = URL.parse(issuer);
  if (url === null || !['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.hash)
    throw new Error(
      `[app.auth.oauth] issuer must be an origin such as https://skills.example.com (no path, query or fragment); ` +
        `got ${issuer}.`,
    );
  return {
    issuer,
    resource: `${issuer}/mcp`,
    resourceMetadata: `${issuer}/.well-known/oauth-protected-resource/mcp`,
  };
}
