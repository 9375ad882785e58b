import { Module } from '@nestjs/common';
import { UsersModule } from '../../domain/users/users.module.js';
import { PersistenceModule } from '../../infra/database/persistence.module.js';
import { AdminAuditController } from './admin-audit.controller.js';
import { AdminGroupsController } from './admin-groups.controller.js';
import { AdminUsersController } from './admin-users.controller.js';
import { PrincipalGuard } from './guards/principal.guard.js';
import { MeController } from './me.controller.js';
import { OAuthProbesController } from './oauth-probes.controller.js';

/**
 * The users (their storage from the database), their routes and the guard every route passes (the app registers it as
 * `APP_GUARD`).
 */
@Module({
  imports: [UsersModule.forRoot({ imports: [PersistenceModule] })],
  controllers: [MeController, AdminUsersController, AdminGroupsController, AdminAuditController, OAuthProbesController],
  providers: [PrincipalGuard],
  exports: [PrincipalGuard, UsersModule],
})
export class AuthHttpModule {}
