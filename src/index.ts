/**
 * `skillhost`: the server, for a program that starts it itself (the `skillhost` command and
 * `dist/src/main.js` do it from `config.toml` and the environment). `loadConfig()` reads those;
 * `configWith()` builds a configuration from values alone.
 */
export { closeGracefully, createApp } from './app/app.factory.js';
export { AppModule } from './app/app.module.js';
export { ConfigError, configWith, loadConfig, type LoadConfigOptions } from './config/config-loader.js';
export type { AppConfig } from './config/app-config.js';
