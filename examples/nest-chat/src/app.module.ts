import { type DynamicModule, Module } from '@nestjs/common';
import { SkillsModule } from '@skillhost/nest';
import { Activations } from './activations.provider.js';
import { ChatController } from './chat.controller.js';
import { ChatService } from './chat.service.js';
import { EXAMPLE_CONFIG, type ExampleConfig } from './example-config.js';

/** This app's own module: its controller, its model loop, and Skillhost's SkillsModule. */
@Module({})
export class AppModule {
  static register(config: ExampleConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        SkillsModule.forRoot({
          directories: config.skillDirectories,
          validation: 'standard',
          catalogue: { format: 'xml', budgetTokens: 4000 },
        }),
      ],
      controllers: [ChatController],
      providers: [{ provide: EXAMPLE_CONFIG, useValue: config }, Activations, ChatService],
    };
  }
}
