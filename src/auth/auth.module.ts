import { Module } from '@nestjs/common';
import { PersistenceModule } from '../persistence/persistence.module.js';
import { AdminUsersController } from './admin-users.controller.js';
import { AuthService } from './auth.service.js';
import { BootstrapAdminService } from './bootstrap-admin.service.js';
import { MeController } from './me.controller.js';
import { OAuthProbesController } from './oauth-probes.controller.js';
import { PrincipalGuard } from './principal.guard.js';
import { UsersService } from './users.service.js';

@Module({
  imports: [PersistenceModule],
  controllers: [MeController, AdminUsersController, OAuthProbesController],
  providers: [AuthService, UsersService, PrincipalGuard, BootstrapAdminService],
  exports: [AuthService, UsersService, PrincipalGuard],
})
export class AuthModule {}
