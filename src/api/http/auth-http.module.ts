import { Module } from '@nestjs/common';
import { SignInModule } from '../../domain/sign-in/sign-in.module.js';
import { UsersModule } from '../../domain/users/users.module.js';
import { PersistenceModule } from '../../infra/database/persistence.module.js';
import { AdminAuditController } from './admin-audit.controller.js';
import { AdminGroupsController } from './admin-groups.controller.js';
import { AdminUsersController } from './admin-users.controller.js';
import { PrincipalGuard } from './guards/principal.guard.js';
import { MeController } from './me.controller.js';
import { SignInController } from './sign-in/sign-in.controller.js';
import { AdminSignInController, WebSessionController } from './sign-in/web-session.controller.js';

const USERS = UsersModule.forRoot({ imports: [PersistenceModule] });

/**
 * The users (their storage from the database), sign-in with the identity provider, their routes and the guard every
 * route passes (the app registers it as `APP_GUARD`).
 */
@Module({
  imports: [USERS, SignInModule.forRoot({ imports: [PersistenceModule], users: USERS })],
  controllers: [
    MeController,
    AdminUsersController,
    AdminGroupsController,
    AdminAuditController,
    SignInController,
    WebSessionController,
    AdminSignInController,
  ],
  providers: [PrincipalGuard],
  exports: [PrincipalGuard, USERS],
})
export class AuthHttpModule {}
