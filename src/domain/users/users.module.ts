import { Module } from '@nestjs/common';
import { PersistenceModule } from '../../infra/database/persistence.module.js';
import { AuthService } from './auth.service.js';
import { BootstrapAdminService } from './bootstrap-admin.service.js';
import { UsersService } from './users.service.js';

/** Users, their keys and who a request's key belongs to: the rules, without the routes. */
@Module({
  imports: [PersistenceModule],
  providers: [AuthService, UsersService, BootstrapAdminService],
  exports: [AuthService, UsersService],
})
export class UsersModule {}
