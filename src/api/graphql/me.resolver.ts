import { Query, Resolver } from '@nestjs/graphql';
import { CurrentPrincipal, RequireScope } from '../http/decorators/auth.decorators.js';
import { AuthService } from '../../domain/users/auth.service.js';
import type { Principal } from '../../domain/users/principal.js';
import { presentUser } from '../presenters/user.presenter.js';
import { UsersService } from '../../domain/users/users.service.js';
import { MeDto } from '../http/dto/user-responses.dto.js';

/** The twin of MeController's GET /v1/me. */
@Resolver(() => MeDto)
@RequireScope('none')
export class MeResolver {
  constructor(
    private readonly users: UsersService,
    private readonly auth: AuthService,
  ) {}

  @Query(() => MeDto, { description: 'The caller: their user, the auth mode in force and the key they came with.' })
  async me(@CurrentPrincipal() principal: Principal) {
    return {
      ...presentUser(await this.users.getUser(principal.userId)),
      authMode: this.auth.mode,
      keyId: principal.keyId,
    };
  }
}
