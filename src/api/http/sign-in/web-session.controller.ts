import { Body, Controller, Get, Headers, HttpCode, Param, Post, Put, Req, Res } from '@nestjs/common';
import { ApiBody, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppError, ErrorCode } from '@skillhost/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SignInService } from '../../../domain/sign-in/sign-in.service.js';
import { SIGN_IN_COOKIE_PATH } from '../../../domain/users/web-session.js';
import { type SessionHeaders, WebSessionService } from '../../../domain/users/web-session.service.js';
import type { Principal } from '../../../domain/users/principal.js';
import { UsersService } from '../../../domain/users/users.service.js';
import { presentUser } from '../../presenters/user.presenter.js';
import { AdminOnly, CurrentPrincipal, Public } from '../decorators/auth.decorators.js';
import { ApiErrors } from '../openapi/api-errors.decorator.js';
import { MapSignInDto, SignInMappingDto, SignInProvidersDto, WebSessionDto } from './sign-in.dto.js';

/** The web session as the page sees it: which sign-in there is, who is signed in, and logging out. */
@Controller('v1/auth')
@ApiTags('me')
export class WebSessionController {
  constructor(
    private readonly signIn: SignInService,
    private readonly sessions: WebSessionService,
    private readonly users: UsersService,
  ) {}

  @Get('providers')
  @Public()
  @ApiOperation({ summary: 'The identity provider people sign in with, if any' })
  @ApiOkResponse({ type: SignInProvidersDto })
  providers(): SignInProvidersDto {
    const name = this.signIn.displayName;
    return { oidc: name === undefined ? null : { name, startUrl: `${SIGN_IN_COOKIE_PATH}/start` } };
  }

  @Get('session')
  @ApiOperation({
    summary: 'Who is signed in, and the CSRF token for writes',
    description: 'With the session cookie, the token to send as `x-csrf-token` on every write.',
  })
  @ApiOkResponse({ type: WebSessionDto })
  async session(@CurrentPrincipal() principal: Principal, @Headers() headers: SessionHeaders) {
    return {
      user: presentUser(await this.users.getUser(principal.userId)),
      csrfToken: principal.sessionId === undefined ? null : (this.sessions.csrfToken(headers) ?? null),
    };
  }

  /**
   * Ends the session of the cookie (with its CSRF token, as every cookie write), and the OAuth server's own sign-in
   * in this browser, so that the next authorization of an MCP client here asks who is signing in.
   */
  @Post('logout')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Log out: end the web session and the OAuth sign-in of this browser, and clear their cookies',
  })
  @ApiNoContentResponse({ description: 'The session is ended everywhere at once.' })
  @ApiErrors(ErrorCode.CSRF_TOKEN_MISSING)
  async logout(@Req() request: FastifyRequest, @Res() reply: FastifyReply) {
    return reply
      .header('set-cookie', await this.sessions.logOut(request.raw))
      .code(204)
      .send();
  }
}

/** An admin links a person of the identity provider to a user: by email, or by the provider's subject. */
@Controller('v1/admin/users')
@AdminOnly()
@ApiTags('admin')
export class AdminSignInController {
  constructor(private readonly signIn: SignInService) {}

  @Put(':id/sign-in')
  @ApiOperation({ summary: "Set a user's email and/or link a subject of the identity provider to them" })
  @ApiBody({ type: MapSignInDto })
  @ApiOkResponse({ type: SignInMappingDto })
  @ApiErrors(ErrorCode.USER_NOT_FOUND, ErrorCode.SIGN_IN_USER_CONFLICT, ErrorCode.SIGN_IN_NOT_CONFIGURED)
  async map(@Param('id') id: string, @Body() body: MapSignInDto): Promise<SignInMappingDto> {
    if (body.email === undefined && body.subject === undefined)
      throw new AppError(ErrorCode.VALIDATION_FAILED, 'Send `email` (or null), `subject`, or both.');
    return this.signIn.mapUser(id, body);
  }
}
