import { Controller, Get, Query, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { AppError, ErrorCode } from '@skillhost/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SignInService } from '../../../domain/sign-in/sign-in.service.js';
import { Public } from '../decorators/auth.decorators.js';

/** Where the page shows why a sign-in failed: `/?sign_in_error=CODE`. */
export const SIGN_IN_ERROR_PARAM = 'sign_in_error';

/**
 * The browser's side of the sign-in: a redirect to the provider, and its answer back. Not part of the REST API (a
 * browser follows these, no client calls them), so left out of the OpenAPI document.
 */
@Controller('auth/oidc')
@Public()
@ApiExcludeController()
export class SignInController {
  constructor(private readonly signIn: SignInService) {}

  @Get('start')
  async start(@Req() request: FastifyRequest, @Res() reply: FastifyReply, @Query('returnTo') returnTo?: unknown) {
    if (returnTo !== undefined && typeof returnTo !== 'string')
      throw new AppError(ErrorCode.SIGN_IN_RETURN_TO_INVALID, 'returnTo must be given once, as a path such as `/`.');
    const started = await this.signIn.start(returnTo, originOf(request));
    return reply
      .header('set-cookie', started.setCookie)
      .header('cache-control', 'no-store')
      .redirect(started.location, 302);
  }

  /**
   * The provider's answer. A failure sends the browser back to the page with the error's code, which the page
   * explains; the browser never sees a JSON error page in the middle of signing in.
   */
  @Get('callback')
  async callback(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    const query = new URLSearchParams(request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '');
    void reply.header('cache-control', 'no-store');
    try {
      const done = await this.signIn.finish(query, request.headers.cookie, originOf(request));
      return reply.header('set-cookie', done.setCookies).redirect(done.returnTo, 302);
    } catch (error) {
      if (!AppError.isInstance(error) || error.code === ErrorCode.INTERNAL) throw error;
      request.log.warn({ code: error.code }, `Sign-in refused: ${error.message}`);
      return reply.redirect(`/?${SIGN_IN_ERROR_PARAM}=${encodeURIComponent(error.code)}`, 302);
    }
  }
}

/** This server as the browser reached it: the default callback URL is made of it. */
function originOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}
