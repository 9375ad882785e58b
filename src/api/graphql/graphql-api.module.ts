import { type DynamicModule, Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import type { MercuriusDriverConfig } from '@nestjs/mercurius';
import { AuthHttpModule } from '../http/auth-http.module.js';
import { AuthService } from '../../domain/users/auth.service.js';
import { ChatLoadersService } from './chat-loaders.service.js';
import { DeferredMercuriusDriver } from './deferred-mercurius.driver.js';
import { graphqlDriverConfig } from './graphql-driver.config.js';
import { GRAPHQL_RESOLVERS } from './schema.js';

/** The GraphQL front door at /graphql: resolvers that are thin twins of the REST controllers. */
/** The GraphQL door over the app's ChatModule (given, so that every door shares one instance of it). */
@Module({})
export class GraphqlApiModule {
  static forChats(chats: DynamicModule): DynamicModule {
    return {
      module: GraphqlApiModule,
      imports: [
        GraphQLModule.forRootAsync<MercuriusDriverConfig>({
          driver: DeferredMercuriusDriver,
          imports: [AuthHttpModule],
          inject: [AuthService],
          useFactory: (auth: AuthService) => graphqlDriverConfig(auth),
        }),
        AuthHttpModule,
        chats,
      ],
      providers: [...GRAPHQL_RESOLVERS, ChatLoadersService],
    };
  }
}
