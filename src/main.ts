import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './app.factory.js';
import { ConfigError, loadConfig } from './config/config-loader.js';

async function bootstrap(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      for (const problem of error.problems) console.error(`config: ${problem}`);
      process.exit(1);
    }
    throw error;
  }
  let app;
  try {
    app = await createApp(config);
    await app.listen(config.app.port, config.app.host);
  } catch (error) {
    console.error(`skillhost: cannot start: ${error instanceof Error ? error.message : String(error)}`);
    await app?.close().catch(() => undefined);
    process.exit(1);
  }
  new Logger('Skillhost').log(`Listening on http://${config.app.host}:${config.app.port} (skills ${config.app.skills.enabled ? 'enabled' : 'disabled'})`);
}

void bootstrap();
