import { describe, expect, it } from '@jest/globals';
import { Module } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { APP_CONFIG } from './app-config.js';
import { configWith } from './config-loader.js';
import { ConfigModule } from './config.module.js';

describe(ConfigModule.name, () => {
  it("serves the loaded configuration through @nestjs/config's ConfigService and as the typed APP_CONFIG", async () => {
    const config = configWith({ 'app.port': 4321, 'app.skills.enabled': true });
    @Module({})
    class Feature {}
    const moduleRef = await Test.createTestingModule({ imports: [ConfigModule.forRoot(config), Feature] }).compile();
    const sut = moduleRef.get(ConfigService);
    expect(sut.get('app.port')).toBe(4321);
    expect(sut.get('app.skills.enabled')).toBe(true);
    expect(moduleRef.get(APP_CONFIG)).toBe(config);
    // Nothing leaks into the process environment.
    expect(process.env['app.port']).toBeUndefined();
    await moduleRef.close();
  });
});
