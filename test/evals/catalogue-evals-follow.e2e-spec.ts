import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { SkillRegistry } from '@skillhost/core';
import { SkillRegistryService } from '@skillhost/nest';
import request from 'supertest';
import { createApp } from '../../src/app/app.factory.js';
import { configWith } from '../../src/config/config-loader.js';
import { CatalogueEvalFollowerService } from '../../src/domain/skills/evals/catalogue-eval-follower.service.js';
import { EVAL_RUN_STORE, type EvalRunStore } from '../../src/domain/skills/evals/eval-run-store.js';
import { RecordingLogger } from '../hardening/http-client.js';
import { keysFor } from '../support/api-keys.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { skillMd, type TempTree, tempTree } from '../support/files/skill-tree.js';
import { zipOf } from '../support/skill-archives.js';

/** Anthropic's public skills, as the team's skills directory: the catalogue the skills are ranked in. */
const CORPUS = '/work/shared/corpus/anthropics-skills';

const SPEC_WRITER =
  'Co-authors technical specs, design proposals and decision records with the user. Use when asked to write or ' +
  'draft a spec, a proposal or an RFC.';

/** release-notes' cases: one expects spec-writer, which is not installed at first (so that case fails then). */
const RELEASE_NOTES_TRIGGERS = [
  { query: 'write the release notes for version 2.3 from the changelog', should_trigger: true },
  { query: 'summarise what changed in this release for our users', should_trigger: true },
  { query: 'draft a proposal for moving our queue to Kafka', should_trigger: false, expect_skill: 'spec-writer' },
];

interface KeptRow {
  digest: string;
  score: { cases: number; passed: number; recall: number | null };
  run_at: Date;
}

const WAIT_MS = 15_000;

/** Two instances on one database, as a load balancer has them: each follows the catalogue and runs the evals. */
describe('the catalogue level after every install and reload, with no route called', () => {
  let db: TestDatabase;
  let tree: TempTree;
  let apps: NestFastifyApplication[] = [];
  let admin: Record<string, string>;
  const logger = new RecordingLogger();
  /** What each instance's keep() answered, by skill: true where it wrote. */
  const writes: { app: number; skill: string; digest: string; wrote: boolean }[] = [];
  const http = () => request(apps[0].getHttpServer());

  const kept = (skill: string) =>
    query<KeptRow>(
      db.url,
      "SELECT digest, score, run_at FROM skill_eval_runs WHERE skill_name = $1 AND level = 'catalogue' " +
        'ORDER BY run_at DESC',
      [skill],
    );
  const digestOf = (skill: string) =>
    (apps[0].get(SkillRegistryService) as SkillRegistry).snapshot.skills.get(skill)?.digest;
  const settled = () => Promise.all(apps.map((app) => app.get(CatalogueEvalFollowerService).settled()));
  /** Waits until `check` holds, then until both instances have run what they had to. */
  async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
    const started = performance.now();
    while (!(await check())) {
      if (performance.now() - started > WAIT_MS) throw new Error(`not within ${WAIT_MS} ms: ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await settled();
  }
  const writeReleaseNotes = (description: string) => {
    tree.write('skills/release-notes/SKILL.md', skillMd({ name: 'release-notes', description }));
    tree.write('skills/release-notes/evals/triggers.json', JSON.stringify(RELEASE_NOTES_TRIGGERS));
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    tree = tempTree('skillhost-evals-follow-');
    writeReleaseNotes(
      'Writes release notes from a changelog or merged pull requests. Use when asked what changed in a release.',
    );
    const build = () =>
      createApp(
        configWith({
          'app.database.url': db.url,
          'app.auth.mode': 'api_key',
          'app.skills.enabled': true,
          'app.skills.directories': [CORPUS, tree.path('skills')],
          'app.skills.sync_interval_ms': 60_000,
        }),
        { logger },
      );
    apps = [await build(), await build()];
    apps.forEach((app, index) => {
      const store = app.get<EvalRunStore>(EVAL_RUN_STORE);
      const keep = store.keep.bind(store);
      jest.spyOn(store, 'keep').mockImplementation(async (run) => {
        const wrote = await keep(run);
        writes.push({ app: index, skill: run.skill, digest: run.digest, wrote });
        return wrote;
      });
    });
    admin = { authorization: `Bearer ${(await keysFor(apps[0], { root: 'admin' })).root}` };
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await db?.drop();
    tree?.cleanup();
  });

  it('runs the evals of every skill at start-up: release-notes kept, failing the case for spec-writer', async () => {
    await eventually('a kept run of release-notes', async () => (await kept('release-notes')).length > 0);
    const [run] = await kept('release-notes');
    expect(run).toMatchObject({ digest: digestOf('release-notes'), score: { cases: 3, passed: 2, recall: 1 } });
  });

  it(
    'keeps a run of a skill installed, once though both instances ran it, and runs again the skill whose result ' +
      'the new description moved',
    async () => {
      writes.length = 0;
      const archive = await zipOf({
        'spec-writer/SKILL.md': skillMd({ name: 'spec-writer', description: SPEC_WRITER }),
        'spec-writer/evals/triggers.json': JSON.stringify({
          should_trigger: ['put together an RFC on the billing service with me'],
          should_not_trigger: ['make an animated GIF of our logo for Slack'],
        }),
      });
      const installed = await http()
        .post('/v1/admin/skills')
        .set(admin)
        .set('content-type', archive.contentType)
        .send(archive.body)
        .expect(201);
      const digest = installed.body.digest as string;
      await eventually('a kept run of spec-writer', async () =>
        (await kept('spec-writer')).some((run) => run.digest === digest),
      );
      await eventually('both instances have run spec-writer', async () =>
        [0, 1].every((app) => writes.some((write) => write.app === app && write.skill === 'spec-writer')),
      );
      expect((await kept('spec-writer'))[0]).toMatchObject({ digest, score: { cases: 2, passed: 2, recall: 1 } });
      // Each instance ran it on the same catalogue; the second found the same result kept and wrote nothing.
      expect(writes.filter((write) => write.skill === 'spec-writer' && write.wrote)).toHaveLength(1);
      // release-notes is the same version, but spec-writer now takes the request its negative case expects there.
      await eventually('release-notes run again', async () => (await kept('release-notes'))[0].score.passed === 3);
      expect(await kept('release-notes')).toHaveLength(1);
      expect(writes.filter((write) => write.skill === 'release-notes' && write.wrote)).toHaveLength(1);
    },
  );

  it('keeps a run of the new version after a reload with a changed folder', async () => {
    const before = digestOf('release-notes');
    writeReleaseNotes('Writes release notes for our users from a changelog. Use when asked what changed in a release.');
    await http().post('/v1/admin/skills/reload').set(admin).expect(200);
    const after = digestOf('release-notes');
    expect(after).not.toBe(before);
    await eventually('a kept run of the new release-notes', async () =>
      (await kept('release-notes')).some((run) => run.digest === after),
    );
    expect((await kept('release-notes')).map((run) => run.digest)).toEqual([after, before]);
  });

  it('runs a skill again when a case is kept for it or removed, on the same version', async () => {
    const digest = digestOf('release-notes');
    const cases = '/v1/admin/skills/release-notes/evals/cases';
    const added = await http()
      .post(cases)
      .set(admin)
      .send({ query: 'what changed in 2.4, for the release notes', should_trigger: true })
      .expect(201);
    await eventually('a run with the kept case', async () => (await kept('release-notes'))[0].score.cases === 4);
    expect((await kept('release-notes'))[0].digest).toBe(digest);
    await http().delete(`${cases}/${added.body.added[0].id}`).set(admin).expect(204);
    await eventually('a run without it', async () => (await kept('release-notes'))[0].score.cases === 3);
  });

  it("keeps the publishing gate's run of a new version, which has no evals of its own, with the install", async () => {
    const archive = await zipOf({
      'spec-writer/SKILL.md': skillMd({ name: 'spec-writer', description: `${SPEC_WRITER} Also for ADRs.` }),
    });
    const installed = await http()
      .post('/v1/admin/skills')
      .set(admin)
      .set('content-type', archive.contentType)
      .send(archive.body)
      .expect(201);
    // Kept before the answer: the gate ran the serving version's cases on it (the version itself has none to run).
    expect((await kept('spec-writer'))[0]).toMatchObject({
      digest: installed.body.digest,
      score: { cases: 2, passed: 2, recall: 1 },
    });
    await settled();
  });

  it('logs a run that fails, and the install and the reload still succeed', async () => {
    await query(db.url, 'ALTER TABLE skill_eval_runs RENAME TO skill_eval_runs_away');
    try {
      const errors = logger.errors.length;
      writeReleaseNotes('Writes release notes from a changelog. Use when asked what changed in this release.');
      await http().post('/v1/admin/skills/reload').set(admin).expect(200);
      await eventually('the failure logged', async () => logger.errors.length > errors);
      expect(logger.errors.slice(errors)).toContainEqual(
        expect.stringMatching(
          /^Running the trigger evals \(catalogue level\) after a change of the catalogue failed: .*skill_eval_runs/,
        ),
      );
      const archive = await zipOf({
        'spec-writer/SKILL.md': skillMd({ name: 'spec-writer', description: `${SPEC_WRITER} Also for design docs.` }),
      });
      await http()
        .post('/v1/admin/skills')
        .set(admin)
        .set('content-type', archive.contentType)
        .send(archive.body)
        .expect(201);
      await settled();
    } finally {
      await query(db.url, 'ALTER TABLE skill_eval_runs_away RENAME TO skill_eval_runs');
    }
  });
});
