import { type DynamicModule, Module } from '@nestjs/common';
import { GatewayController } from './gateway.controller.js';

/** The OpenAI-compatible gateway's routes over the app's ChatModule (given, so every door shares one instance). */
@Module({})
export class GatewayModule {
  static forChats(chats: DynamicModule): DynamicModule {
    return { module: GatewayModule, imports: [chats], controllers: [GatewayController] };
  }
}
