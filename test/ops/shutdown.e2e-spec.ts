import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EmbeddedPostgresServer } from '../../src/infra/database/embedded-postgres.server.js';
import { freePort } from '../support/ports.js';
import { buildServer, LISTENING_LINE } from '../support/instances.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { type RecordedRequest, ScriptedModelServer } from '../support/scripted-model-server.js';
import { tempTree } from '../support/files/skill-tree.js';
import { parseSse } from '../support/sse.js';

/**
 * SIGTERM to a real server process (the built `dist/src/main.js`, as `npm start` runs it) while
 * turns are in flight: they are answered and stored, new ones are refused, the process exits 0.
 */

interface ServerProcess {
  child: ChildProcess;
  baseUrl: string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

interface Answer {
  status: number;
  text: string;
}

/** One request on a connection of its own (no keep-alive), as a new client would send it. */
function send(url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: body === undefined ? 'GET' : 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function lastUserText(request: RecordedRequest): string {
  const user = request.body.messages.filter((m) => m.role === 'user').at(-1);
  return typeof user?.content === 'string' ? user.content : JSON.stringify(user?.content);
}

describe('start and graceful shutdown of a server process', () => {
  const tree = tempTree('skillhost-shutdown-');
  // As root the embedded server runs as `postgres`, which must be able to reach its data folder.
  chmodSync(tree.root, 0o755);
  const model = new ScriptedModelServer();
  const children: ChildProcess[] = [];
  let db: TestDatabase;

  async function startServer(name: string, database: string, app: string = ''): Promise<ServerProcess> {
    const config = tree.write(
      `${name}.toml`,
      `[app]\nport = 0\nhost = "127.0.0.1"\ndefault_model = "scripted"\n${app}\n` +
        `[app.models.scripted]\nprovider = "openai-compatible"\nbase_url = "${model.url}"\nmodel = ` +
        `"scripted-1"\ntimeout_ms = 20000\nmax_retries = 0\n` +
        `[app.auth]\nmode = "none"\n[app.logging]\nformat = "json"\n[app.limits]\nturns_per_minute = ` +
        `10000\nrequests_per_minute = 10000\n` +
        `[app.database]\n${database}\n`,
    );
    const child = spawn(process.execPath, [`${process.cwd()}/dist/src/main.js`], {
      cwd: tree.root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SKILLHOST_CONFIG: config },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    let exited = false;
    void exit.then(() => (exited = true));
    await until(() => exited || LISTENING_LINE.test(output), 'the server to listen', 30_000);
    if (exited) throw new Error(`the server exited before listening:\n${output}`);
    const port = LISTENING_LINE.exec(output)![2];
    return { child, baseUrl: `http://127.0.0.1:${port}`, exit, output: () => output };
  }

  async function createChats(server: ServerProcess, count: number): Promise<string[]> {
    return Promise.all(
      Array.from(
        { length: count },
        async () => JSON.parse((await send(`${server.baseUrl}/v1/chats`, {})).text).id as string,
      ),
    );
  }

  /**
   * Ten slow turns (even ones JSON, odd ones SSE) are all at the model when SIGTERM arrives; a
   * turn sent after it finds no server; all ten are answered in full; the process exits 0.
   */
  async function tenTurnsThroughSigterm(server: ServerProcess, chats: string[]): Promise<void> {
    model.answerWith((request) => ({ text: `answer to ${lastUserText(request)}`, delayMs: 1500 }));
    const turns = chats.map((id, i) =>
      send(
        `${server.baseUrl}/v1/chats/${id}/messages`,
        { content: `turn ${i}` },
        i % 2 === 1 ? { accept: 'text/event-stream' } : {},
      ),
    );
    await until(() => model.requests.length === 10, 'ten turns at the model');
    server.child.kill('SIGTERM');
    await until(() => server.output().includes('SIGTERM: refusing new connections'), 'the shutdown to begin');

    const late = await send(`${server.baseUrl}/v1/chats/${chats[0]}/messages`, { content: 'too late' }).catch(
      (error: NodeJS.ErrnoException) => error.code,
    );
    expect(late).toBe('ECONNREFUSED');

    const answers = await Promise.all(turns);
    answers.forEach((answer, i) => {
      if (i % 2 === 0) {
        expect(answer.status).toBe(201);
        expect(JSON.parse(answer.text).assistantMessage.content).toBe(`answer to turn ${i}`);
      } else {
        expect(answer.status).toBe(200);
        const events = parseSse(answer.text);
        expect(events.at(-1)).toMatchObject({
          event: 'done',
          data: { assistantMessage: { content: `answer to turn ${i}` } },
        });
      }
    });
    expect(await server.exit).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain('Stopped');
    expect(model.requests).toHaveLength(10);
  }

  const storedTurns = (url: string) =>
    query<{ role: string; content: string }>(
      url,
      'SELECT role, content FROM chat_messages ORDER BY content, role DESC',
    ).then((rows) => rows.map((r) => `${r.role}: ${r.content}`));
  const expectedTurns = Array.from({ length: 10 }, (_, i) => [`user: turn ${i}`, `assistant: answer to turn ${i}`])
    .flat()
    .sort();

  beforeAll(async () => {
    await model.start();
    db = await createTestDatabase();
    buildServer();
  }, 120_000);
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await model.stop();
    await db?.drop();
    tree.cleanup();
  });

  it('with DATABASE_URL: ten turns in flight (JSON and SSE) are answered and stored, a later one is ' +
    'refused, exit 0', async () => {
    const server = await startServer('url', `url = "${db.url}"`);
    const chats = await createChats(server, 10);
    await tenTurnsThroughSigterm(server, chats);
    expect((await storedTurns(db.url)).sort()).toEqual(expectedTurns);
  }, 60_000);

  it('with the embedded PostgreSQL: the same, and the embedded server is stopped last', async () => {
    const dataDir = tree.path('pg', 'data');
    const port = await freePort();
    const server = await startServer('embedded', `embedded_dir = "${dataDir}"\nembedded_port = ${port}`);
    const chats = await createChats(server, 10);
    await tenTurnsThroughSigterm(server, chats);
    expect(existsSync(`${dataDir}/postmaster.pid`)).toBe(false);
    const embedded = new EmbeddedPostgresServer({ dataDir, port });
    try {
      expect((await storedTurns(await embedded.start())).sort()).toEqual(expectedTurns);
    } finally {
      await embedded.stop();
    }
  }, 60_000);

  it('a turn that outlives shutdown_grace_ms is cut: its client gets a reset, nothing of it is ' +
    'stored, exit 0', async () => {
    const cutDb = await createTestDatabase();
    try {
      const server = await startServer('grace', `url = "${cutDb.url}"`, 'shutdown_grace_ms = 300');
      const [jsonChat, sseChat] = await createChats(server, 2);
      model.answerWith(() => ({ text: 'far too late', delayMs: 5000 }));
      const turns = [
        send(`${server.baseUrl}/v1/chats/${jsonChat}/messages`, { content: 'slow' }),
        send(`${server.baseUrl}/v1/chats/${sseChat}/messages`, { content: 'slow' }, { accept: 'text/event-stream' }),
      ].map((turn) =>
        turn.then(
          (answer) => `answered ${answer.status}`,
          (error: NodeJS.ErrnoException) => error.code ?? error.message,
        ),
      );
      await until(() => model.requests.length === 2, 'two turns at the model');
      // The model answers only after 5 s: resets rather than answers, and the log line, show the grace period cut them.
      server.child.kill('SIGTERM');
      expect(await Promise.all(turns)).toEqual(['ECONNRESET', expect.stringMatching(/^(ECONNRESET|aborted)$/)]);
      expect(await server.exit).toEqual({ code: 0, signal: null });
      expect(server.output()).toContain('Cut 2 turn(s) still running at the end of the grace period');
      expect(await query(cutDb.url, 'SELECT count(*)::int AS n FROM chat_messages')).toEqual([{ n: 0 }]);
    } finally {
      await cutDb.drop();
    }
  }, 30_000);

  it('a start-up that fails prints one line, without a stack, and exits 1', () => {
    const start = (toml: string, env: Record<string, string> = {}) =>
      spawnSync(process.execPath, [`${process.cwd()}/dist/src/main.js`], {
        cwd: tree.root,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          SKILLHOST_CONFIG: tree.write('failing.toml', toml),
          ...env,
        },
        encoding: 'utf8',
        timeout: 30_000,
      });
    const unreachable = start('[app]\nport = 0\n[app.database]\nurl = "postgres://app:s3cret@127.0.0.1:1/nothing"\n');
    expect(unreachable).toMatchObject({
      status: 1,
      stdout: '',
      stderr:
        'skillhost: cannot start: Cannot use the database at postgres://app@127.0.0.1:1/nothing: connect ' +
        'ECONNREFUSED 127.0.0.1:1\n',
    });
    const malformed = start('[app]\nport = 0\n', { DATABASE_URL: 'postgres://app:s3cret@:5432' });
    expect(malformed).toMatchObject({
      status: 1,
      stdout: '',
      stderr: expect.stringMatching(/^config: DATABASE_URL \(app\.database\.url\): [^\n]+\n$/),
    });
    expect(malformed.stderr).not.toContain('s3cret');
  }, 60_000);
});
