import { Controller, Get, Post } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { AppError, ErrorCode } from '@skillhost/core';
import { Public } from './decorators/auth.decorators.js';

/**
 * The routes MCP clients probe for OAuth (GET discovery and `authorize`; POST registration and token). Part of MCP's
 * authorization specification, not of the REST API: left out of the OpenAPI document.
 */
export const OAUTH_PROBES = {
  get: [
    '.well-known/oauth-protected-resource',
    '.well-known/oauth-protected-resource/*',
    '.well-known/oauth-authorization-server',
    '.well-known/oauth-authorization-server/*',
    '.well-known/openid-configuration',
    '.well-known/openid-configuration/*',
    'mcp/.well-known/openid-configuration',
    'mcp/.well-known/oauth-authorization-server',
    'authorize',
    'authorize/*',
  ],
  post: ['register', 'register/*', 'token', 'token/*'],
} as const;

/**
 * After a 401, MCP clients look for OAuth (the MCP authorization specification): protected-resource
 * metadata, authorization-server metadata, OpenID configuration, then the default `/register`,
 * `/authorize` and `/token`. Skillhost takes API keys only, so each of those answers 404
 * `OAUTH_NOT_SUPPORTED` with a message saying how to send a key, which the clients that show the
 * body pass on, rather than a bare "no such route" that reads like a broken server.
 */
@Controller()
@Public()
@ApiExcludeController()
export class OAuthProbesController {
  @Get([...OAUTH_PROBES.get])
  discovery(): never {
    throw oauthNotSupported();
  }

  @Post([...OAUTH_PROBES.post])
  registration(): never {
    throw oauthNotSupported();
  }
}

export function oauthNotSupported(): AppError {
  return new AppError(
    ErrorCode.OAUTH_NOT_SUPPORTED,
    'This Skillhost server takes API keys, not OAuth: send `Authorization: Bearer skh_…` with a key of yours ' +
      '(POST /v1/me/keys with a key you have, or ask an admin to run `skillhost keys create --user NAME`); see ' +
      "docs/mcp-and-agents.md for each agent's configuration.",
  );
}
