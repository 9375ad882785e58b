import { Query, Resolver } from '@nestjs/graphql';
import { CurrentPrincipal } from '../auth/auth.decorators.js';
import { AuthService } from '../auth/auth.service.js';
import { MeDto } from '../auth/dto/user-responses.dto.js';
import type { Principal } from '../auth/principal.js';
import { presentUser } from '../auth/user.presenter.js';
import { UsersService } from '../auth/users.service.js';

/** The twin of MeController's GET /v1/me. */
@Resolver(() => MeDto)
export class MeResolver {
  constructor(
    private readonly users: UsersService,
    private readonly auth: AuthService,
  ) {}

  @Query(() => MeDto, { description: 'The caller: their user, the auth mode in force and the key they came with.' })
  async me(@CurrentPrincipal() principal: Principal) {
    return { ...presentUser(await this.users.getUser(principal.userId)), authMode: this.auth.mode, keyId: principal.keyId };
  }
}
