import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SkillRegistryService } from '@skillhost/nest';
import { SkillStoreService } from '../../src/domain/skills/store/skill-store.service.js';
import { SkillSyncService } from '../../src/domain/skills/store/skill-sync.service.js';
import { createTestApp } from '../support/app.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * An operator's reload bumps the reload generation in PostgreSQL before it marks itself as under
 * way. A sync check (its own notification, or the periodic one) that reads the database in between
 * must wait for that reload, not start a second scan of its own.
 */
describe("an operator's reload is one scan on its own instance", () => {
  let tree: TempTree;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
    app = await createTestApp({
      'app.skills.enabled': true,
      'app.skills.directories': [tree.path('skills')],
      'app.skills.store_directory': tree.path('store'),
    });
  });
  afterAll(async () => {
    await app?.close();
    tree?.cleanup();
  });

  it(
    'a sync check that reads the bumped generation in the gap waits for the reload and does not scan ' + 'again',
    async () => {
      const registry = app.get(SkillRegistryService);
      const store = app.get(SkillStoreService);
      const sync = app.get(SkillSyncService);
      await sync.check();
      let scans = 0;
      const unsubscribe = registry.onSwap(() => scans++);
      // A check that has passed its wait for running reloads and is reading the database, which
      // answers only once the operator's reload has bumped the generation and not yet gone on.
      const requestReload = store.requestReload.bind(store);
      const generations = store.generations.bind(store);
      let bumped!: () => void;
      let seen!: () => void;
      let reading!: () => void;
      const afterBump = new Promise<void>((resolve) => (bumped = resolve));
      const read = new Promise<void>((resolve) => (seen = resolve));
      const inRead = new Promise<void>((resolve) => (reading = resolve));
      store.generations = async () => {
        store.generations = generations;
        reading();
        await afterBump;
        const value = await generations();
        seen();
        return value;
      };
      const checking = sync.check();
      store.requestReload = async () => {
        const requested = await requestReload();
        bumped();
        await read;
        return requested;
      };
      try {
        // Regression, fixed since a late store notification made the test hang one run in four. Was: when a check
        // (started by that notification) was under way, this one only queued a rerun, which began after the reload
        // and waited for it, while the reload waited for its read: the reload starts only once a check is reading.
        await inRead;
        const { snapshot } = await registry.reloadEverywhere();
        await checking;
        await registry.settled();
        expect(snapshot.skills.has('pdf')).toBe(true);
        expect(scans).toBe(1);
        expect(registry.loadedGenerations.reloadGeneration).toBe((await generations()).reloadGeneration);
      } finally {
        store.requestReload = requestReload;
        store.generations = generations;
        unsubscribe();
      }
    },
  );
});
