import { Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import type { MercuriusDriverConfig } from '@nestjs/mercurius';
import { AuthModule } from '../auth/auth.module.js';
import { AuthService } from '../auth/auth.service.js';
import { ChatModule } from '../chat/chat.module.js';
import { SkillsApiModule } from '../skills/skills-api.module.js';
import { ChatLoadersService } from './chat-loaders.service.js';
import { DeferredMercuriusDriver } from './deferred-mercurius.driver.js';
import { graphqlDriverConfig } from './graphql-driver.config.js';
import { GRAPHQL_RESOLVERS } from './schema.js';

/** The GraphQL front door at /graphql: resolvers that are thin twins of the REST controllers. */
@Module({
  imports: [GraphQLModule.forRootAsync<MercuriusDriverConfig>({
      driver: DeferredMercuriusDriver,
      imports: [AuthModule],
      inject: [AuthService],
      useFactory: (auth: AuthService) => graphqlDriverConfig(auth),
    }), AuthModule, SkillsApiModule, ChatModule],
  providers: [...GRAPHQL_RESOLVERS, ChatLoadersService],
})
export class GraphqlApiModule {}
