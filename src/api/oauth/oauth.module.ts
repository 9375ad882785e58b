import { Module } from '@nestjs/common';
import { AuthHttpModule } from '../http/auth-http.module.js';
import { PersistenceModule } from '../../infra/database/persistence.module.js';
import { OAuthProbesController } from '../http/oauth-probes.controller.js';
import { OAuthGrantsController } from './oauth-grants.controller.js';
import { OAuthInteractions } from './oauth-interactions.js';
import { OAuthServerService } from './oauth-server.service.js';

/** OAuth for MCP clients (`[app.auth.oauth] enabled`): the authorization server, its pages and a person's grants. */
@Module({
  imports: [PersistenceModule, AuthHttpModule],
  controllers: [OAuthGrantsController],
  providers: [OAuthServerService, OAuthInteractions],
  exports: [OAuthServerService, OAuthInteractions],
})
export class OAuthModule {}

/** OAuth off: the probes of MCP clients answer 404 OAUTH_NOT_SUPPORTED, saying how to send a key instead. */
@Module({ controllers: [OAuthProbesController] })
export class OAuthProbesModule {}
