import { chmodSync, readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LoggerService } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createApp } from '../../src/app/app.factory.js';
import { configWith } from '../../src/config/config-loader.js';
import { LifecycleService } from '../../src/domain/lifecycle/lifecycle.service.js';
import { DATA_SOURCE } from '../../src/infra/database/persistence.tokens.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { ScriptedModelServer } from '../support/scripted-model-server.js';
import { freePort } from '../support/ports.js';
import { tempTree } from '../support/files/skill-tree.js';

const UNAVAILABLE = {
  code: 'DATABASE_UNAVAILABLE',
  message: 'The database is unavailable; nothing was changed. Try again shortly.',
};
const STATEMENT_TIMEOUT_MS = 1000;

interface Outcome {
  status: number;
  body: unknown;
  content: string;
}

function captureLogs(): { logger: LoggerService; lines: string[] } {
  const lines: string[] = [];
  const keep = (message: unknown) => void lines.push(String(message));
  return { lines, logger: { log: keep, warn: keep, error: keep, debug: () => undefined, verbose: () => undefined } };
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const postmasterPid = (dataDir: string) =>
  Number.parseInt(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0], 10);

/** The postmaster and every backend it forked, from /proc. */
function clusterPids(postmaster: number): number[] {
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        // Field 4 of /proc/PID/stat is the parent; the name in field 2 may hold spaces, hence after ')'.
        return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

describe('the embedded PostgreSQL fails under a running Skillhost', () => {
  const tree = tempTree('skillhost-db-faults-');
  // As root the server runs as `postgres`, which must be able to reach its data folder.
  chmodSync(tree.root, 0o755);
  const dataDir = tree.path('pg', 'data');
  const model = new ScriptedModelServer();
  const logs = captureLogs();
  let app: NestFastifyApplication;
  const http = () => request(app.getHttpServer());
  const turn = async (chatId: string, content: string): Promise<Outcome> => {
    const res = await http().post(`/v1/chats/${chatId}/messages`).send({ content });
    return { status: res.status, body: res.body, content };
  };

  beforeAll(async () => {
    await model.start();
    model.answerWith(() => ({ text: 'ok' }));
    app = await createApp(
      configWith({
        'app.database.embedded_dir': dataDir,
        'app.database.embedded_port': await freePort(),
        'app.database.statement_timeout_ms': STATEMENT_TIMEOUT_MS,
        'app.models': {
          scripted: {
            provider: 'openai-compatible',
            base_url: model.url,
            model: 'scripted-1',
            timeout_ms: 5000,
            max_retries: 0,
          },
        },
        'app.default_model': 'scripted',
        'app.auth.mode': 'none',
        'app.limits.turns_per_minute': 1_000_000,
        'app.limits.requests_per_minute': 1_000_000,
      }),
      { logger: logs.logger },
    );
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await model.stop();
    tree.cleanup();
  });

  it('killed (SIGKILL) during a stream of turns: clean 503s, restarted by itself, every acknowledged ' +
    'turn stored', async () => {
    const lifecycle = app.get(LifecycleService);
    const chats = await Promise.all(
      [0, 1, 2, 3].map(async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string),
    );
    const outcomes: Outcome[] = [];
    let stop = false;
    const workers = chats.map(async (chatId, w) => {
      for (let i = 0; !stop; i++) outcomes.push(await turn(chatId, `worker ${w} turn ${i}`));
    });
    const successes = () => outcomes.filter((o) => o.status === 201).length;
    // Heard as it happens: the down window can be shorter than any poll.
    let sawDown = false;
    const markDown = lifecycle.markDatabaseDown.bind(lifecycle);
    lifecycle.markDatabaseDown = (reason: string) => {
      sawDown = true;
      markDown(reason);
    };
    try {
      await until(() => successes() >= 8, 'turns before the kill');
      const killed = postmasterPid(dataDir);
      process.kill(killed, 'SIGKILL');
      const killedAt = outcomes.length;
      await until(() => outcomes.slice(killedAt).some((o) => o.status === 503), 'a 503 after the kill');
      const firstFailure = outcomes.length;
      await until(
        () => outcomes.slice(firstFailure).filter((o) => o.status === 201).length >= 8,
        'turns to succeed again',
      );
      expect(postmasterPid(dataDir)).not.toBe(killed);
    } finally {
      stop = true;
      await Promise.all(workers);
    }

    for (const outcome of outcomes) {
      if (outcome.status !== 201)
        expect({ status: outcome.status, body: outcome.body }).toEqual({ status: 503, body: UNAVAILABLE });
    }
    expect(sawDown).toBe(true);
    expect(lifecycle.databaseDown).toBeUndefined();
    expect(lifecycle.isReady).toBe(true);
    expect(logs.lines.filter((line) => line.includes('stopped unexpectedly'))).toHaveLength(1);
    expect(logs.lines.filter((line) => line.includes('is running again'))).toHaveLength(1);

    const stored = new Set(
      (
        (await app.get<DataSource>(DATA_SOURCE).query("SELECT content FROM chat_messages WHERE role = 'user'")) as {
          content: string;
        }[]
      ).map((r) => r.content),
    );
    const acknowledged = outcomes.filter((o) => o.status === 201).map((o) => o.content);
    expect(acknowledged.filter((content) => !stored.has(content))).toEqual([]);
  }, 60_000);

  it('frozen (SIGSTOP): requests answer 503 within a few seconds, and recover when it thaws', async () => {
    const chatId = (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
    const pids = clusterPids(postmasterPid(dataDir));
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      const [listed, sent] = await Promise.all([http().get('/v1/chats'), turn(chatId, 'while frozen')]);
      const elapsed = Date.now() - started;
      expect([listed.status, listed.body]).toEqual([503, UNAVAILABLE]);
      expect([sent.status, sent.body]).toEqual([503, UNAVAILABLE]);
      // statement_timeout_ms, plus a second for a server that answers nothing at all.
      expect(elapsed).toBeLessThan(STATEMENT_TIMEOUT_MS * 2 + 1500);
    } finally {
      for (const pid of pids) process.kill(pid, 'SIGCONT');
    }
    await until(async () => (await turn(chatId, 'thawed')).status === 201, 'a turn after the thaw');
  }, 30_000);
});

describe('a locked table with DATABASE_URL', () => {
  let ctx: ChatTestContext;
  beforeAll(async () => {
    ctx = await startChatApp([], {
      'app.database.statement_timeout_ms': STATEMENT_TIMEOUT_MS,
      'app.default_model': 'scripted',
    });
    ctx.model.answerWith(() => ({ text: 'ok' }));
  });
  afterAll(async () => ctx?.close());

  it(
    'a statement past statement_timeout_ms answers 503 DATABASE_UNAVAILABLE, stores nothing, and the next turn ' +
      'works',
    async () => {
      const http = () => request(ctx.app.getHttpServer());
      const chatId = (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
      const locker = new pg.Client({ connectionString: ctx.db.url });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE chat_messages IN ACCESS EXCLUSIVE MODE');
        const started = Date.now();
        const res = await http().post(`/v1/chats/${chatId}/messages`).send({ content: 'blocked' });
        expect([res.status, res.body]).toEqual([503, UNAVAILABLE]);
        expect(Date.now() - started).toBeLessThan(STATEMENT_TIMEOUT_MS + 1500);
        await locker.query('ROLLBACK');
      } finally {
        await locker.end();
      }
      const after = await http().post(`/v1/chats/${chatId}/messages`).send({ content: 'free again' }).expect(201);
      expect(after.body.userMessage.content).toBe('free again');
      expect((await http().get(`/v1/chats/${chatId}/messages`).expect(200)).body.total).toBe(2);
    },
  );
});
