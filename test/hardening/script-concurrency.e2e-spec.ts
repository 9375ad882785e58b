import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { checkSandbox } from '@skillhost/sandbox';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { useSkillTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * How many script sandboxes run at once, through the real doors: one model step calling
 * skills.runScript a dozen times, the tool API over REST and GraphQL, a code skill's
 * ctx.tools.call, two chats of one user, and a second user. Scripts that must overlap wait for a
 * `go` file the test writes into their (read-only to them) skill folder once the server reports
 * them running, so what runs and what is refused never depends on timing.
 */
const missing = await checkSandbox().then(
  () => undefined,
  (error: Error) => error.message,
);
const describeWithSandbox = missing === undefined ? describe : describe.skip;
if (missing !== undefined) console.warn(`SKIPPED script concurrency hardening tests: ${missing}`);

const tree = useSkillTree((t) => {
  writeSkill(t, 'skills', 'waiter', { description: 'Runs scripts that wait.', extra: 'allowed-tools: Bash(sh:*)' });
  t.write('skills/waiter/scripts/wait.sh', '#!/bin/sh\nwhile [ ! -e /skill/go ]; do sleep 0.05; done\necho "ran $1"\n');
  t.write('skills/waiter/scripts/quick.sh', '#!/bin/sh\necho "quick $1"\n');
  t.write('skills/waiter/scripts/hang.sh', '#!/bin/sh\nsleep 100\n');
  writeSkill(t, 'skills', 'sealed', {
    description: 'A folder the sandbox cannot enter.',
    extra: 'allowed-tools: Bash(sh:*)',
  });
  t.write('skills/sealed/scripts/x.sh', '#!/bin/sh\necho sealed\n');
  writeSkill(t, 'code', 'scripter', { description: 'A code skill that runs a script.' });
  t.write(
    'code/scripter/skill.mjs',
    "export async function execute(ctx) { const r = await ctx.tools.call('skills.runScript', { name: 'waiter', " +
      "path: 'scripts/quick.sh', args: ['code'] }); return { success: true, output: `${r.status}: ${r.output}` }; " +
      '}\n',
  );
  // The sandbox runs as uid 65534 when the tests run as root: it must be able to read the folders.
  chmodSync(t.root, 0o755);
});

const BUSY = /^Error \(SCRIPTS_BUSY\): /;

interface Card {
  id: string;
  tool: string;
  status: string;
  output: string;
}

describeWithSandbox('script sandboxes at once: the instance cap ([app.scripts] max_concurrent = 3)', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  const go = () => writeFileSync(tree().path('skills/waiter/go'), '');

  beforeAll(async () => {
    ctx = await startChatApp(
      [tree().path('skills')],
      {
        'app.scripts.enabled': true,
        'app.scripts.timeout_ms': 4000,
        'app.scripts.max_concurrent': 3,
        'app.scripts.max_concurrent_per_user': 0,
        'app.scripts.max_concurrent_per_turn': 0,
        'app.tools.style': 'use_skill',
        'app.skills.code_directories': [tree().path('code')],
      },
      (url) => ({
        scripted: {
          provider: 'openai-compatible',
          base_url: url,
          model: 'scripted-1',
          timeout_ms: 60_000,
          max_retries: 0,
        },
      }),
    );
  });
  afterEach(() => rmSync(tree().path('skills/waiter/go'), { force: true }));
  afterAll(async () => ctx?.close());

  const scripts = async () => scriptMetrics(await http().get('/metrics').expect(200));
  const calls = (count: number, path: string) => ({
    toolCalls: Array.from({ length: count }, (_, i) => ({
      name: 'skills_runScript',
      arguments: { name: 'waiter', path, args: [`n${i}`] },
    })),
  });

  // Regression, fixed since this pass found it. Was: one model step with 12 skills.runScript calls
  // ran 12 sandboxes at once (36 processes), each allowed 64 processes and 512 MB: no cap at all.
  it(
    'one model step calling skills.runScript 12 times runs 3 sandboxes; the 9 others are SCRIPTS_BUSY cards; ' +
      'every call has its card',
    async () => {
      const chat = await newChat();
      ctx.model.play(calls(12, 'scripts/wait.sh'), { text: 'all answered' });
      const turn = http()
        .post(`/v1/chats/${chat}/messages`)
        .send({ content: 'run twelve' })
        .then((answer) => answer);
      await waitFor(async () => {
        const now = await scripts();
        return now.running === 3 && now.refused.instance === 9;
      });
      go();
      const answer = await turn;
      expect(answer.status).toBe(201);
      const cards = answer.body.assistantMessage.toolCards as Card[];
      const modelCalls = (
        ctx.model.requests[1].body.messages.filter((m) => m.role === 'tool') as {
          tool_call_id: string;
          content: string;
        }[]
      ).map((m) => ({ id: m.tool_call_id, content: m.content }));
      // Nothing lost: one card per call, in the model's order, and the model read each answer.
      expect(cards).toHaveLength(12);
      expect(cards.map((card) => card.id)).toEqual(modelCalls.map((call) => call.id));
      expect(cards.map((card) => card.output)).toEqual(modelCalls.map((call) => call.content));
      const ran = cards.filter((card) => card.status === 'ok');
      const busy = cards.filter((card) => BUSY.test(card.output));
      expect(ran).toHaveLength(3);
      for (const card of ran) expect(card.output).toMatch(/\[exit code 0, \d+ ms\]\nran n\d+\n$/);
      expect(busy).toHaveLength(9);
      expect(busy[0]).toMatchObject({
        tool: 'skills.runScript',
        status: 'error',
        output:
          'Error (SCRIPTS_BUSY): This server is already running 3 scripts at once, its limit ([app.scripts] ' +
          'max_concurrent), so this script did not run. Call it again in a moment, one script at a time.',
      });
      expect(answer.body.assistantMessage.content).toBe('all answered');
      const [stored] = await query<{ n: number }>(
        ctx.db.url,
        "SELECT jsonb_array_length(tool_cards)::int AS n FROM chat_messages WHERE chat_id = $1 AND role = 'assistant'",
        [chat],
      );
      expect(stored.n).toBe(12);
      expect((await scripts()).running).toBe(0);
    },
  );

  it('gives every slot back: the next turn runs 3 scripts at once again', async () => {
    const chat = await newChat();
    ctx.model.play(calls(3, 'scripts/quick.sh'), { text: 'done' });
    const answer = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'again' }).expect(201)).body;
    expect(
      (answer.assistantMessage.toolCards as Card[]).map((card) => ({
        status: card.status,
        last: card.output.trim().split('\n').pop(),
      })),
    ).toEqual(['n0', 'n1', 'n2'].map((tag) => ({ status: 'ok', last: `quick ${tag}` })));
  });

  it(
    'shares one cap across every door: the tool API over REST and GraphQL and a code skill are refused while a ' +
      'turn holds the 3 slots',
    async () => {
      const chat = await newChat();
      ctx.model.play(calls(3, 'scripts/wait.sh'), { text: 'done' });
      const turn = http()
        .post(`/v1/chats/${chat}/messages`)
        .send({ content: 'hold them' })
        .then((answer) => answer);
      await waitFor(async () => (await scripts()).running === 3);
      const other = await newChat();
      const rest = (
        await http()
          .post(`/v1/chats/${other}/tools/skills.runScript`)
          .send({ name: 'waiter', path: 'scripts/quick.sh' })
          .expect(200)
      ).body.toolCard;
      expect(rest).toMatchObject({ status: 'error', output: expect.stringMatching(BUSY) });
      const graphql = (
        await http()
          .post('/graphql')
          .send({
            query:
              'mutation($id: ID!, $args: JSON!) { runSkillTool(chatId: $id, tool: "skills.runScript", arguments: ' +
              '$args) { toolCard { status output } } }',
            variables: { id: other, args: { name: 'waiter', path: 'scripts/quick.sh' } },
          })
          .expect(200)
      ).body;
      expect(graphql.data.runSkillTool.toolCard).toMatchObject({
        status: 'error',
        output: expect.stringMatching(BUSY),
      });
      const code = (
        await http()
          .post(`/v1/chats/${other}/tools/use_skill`)
          .send({ skill_name: 'scripter', input: 'go' })
          .expect(200)
      ).body.toolCard;
      expect(code.output).toMatch(/error: Error \(SCRIPTS_BUSY\): This server is already running 3 scripts/);
      go();
      expect((await turn).status).toBe(201);
      expect((await scripts()).running).toBe(0);
      // Once the turn is done, the same calls run.
      expect(
        (
          await http()
            .post(`/v1/chats/${other}/tools/skills.runScript`)
            .send({ name: 'waiter', path: 'scripts/quick.sh', args: ['later'] })
            .expect(200)
        ).body.toolCard.output,
      ).toMatch(/quick later\n$/);
    },
  );

  it('gives the slot back when the script is killed at the time limit, and when the sandbox cannot start', async () => {
    const chat = await newChat();
    ctx.model.play(calls(3, 'scripts/hang.sh'), { text: 'done' });
    const timedOut = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'hang' }).expect(201)).body
      .assistantMessage.toolCards as Card[];
    expect(timedOut.map((card) => card.output.split('\n')[1])).toEqual(
      Array.from({ length: 3 }, () => expect.stringMatching(/^\[stopped at the time limit \(SIGKILL\)/)),
    );
    // A folder uid 65534 cannot enter: the sandbox fails to start, four times, one more than the slots.
    chmodSync(tree().path('skills/sealed'), 0o700);
    try {
      for (let i = 0; i < 4; i++) {
        const card = (
          await http()
            .post(`/v1/chats/${chat}/tools/skills.runScript`)
            .send({ name: 'sealed', path: 'scripts/x.sh' })
            .expect(200)
        ).body.toolCard;
        expect(card.output).toMatch(
          process.getuid?.() === 0 ? /^Error \(INTERNAL\): The script sandbox could not start/ : /sealed/,
        );
      }
    } finally {
      chmodSync(tree().path('skills/sealed'), 0o755);
    }
    ctx.model.play(calls(3, 'scripts/quick.sh'), { text: 'done' });
    const after = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'after' }).expect(201)).body
      .assistantMessage.toolCards as Card[];
    expect(after.map((card) => card.status)).toEqual(['ok', 'ok', 'ok']);
  });

  it('gives the slots back when the client goes away mid-turn', async () => {
    await ctx.app.listen(0, '127.0.0.1');
    const chat = await newChat();
    ctx.model.play(calls(3, 'scripts/wait.sh'), { text: 'done' });
    const client = new AbortController();
    const streamed = fetch(`${await ctx.app.getUrl()}/v1/chats/${chat}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ content: 'leaving' }),
      signal: client.signal,
    })
      .then((answer) => answer.text())
      .catch((error: Error) => error.name);
    await waitFor(async () => (await scripts()).running === 3);
    client.abort();
    expect(await streamed).toBe('AbortError');
    go();
    await waitFor(async () => (await scripts()).running === 0);
    ctx.model.play(calls(3, 'scripts/quick.sh'), { text: 'done' });
    const after = (
      await http()
        .post(`/v1/chats/${await newChat()}/messages`)
        .send({ content: 'after' })
        .expect(201)
    ).body.assistantMessage.toolCards as Card[];
    expect(after.map((card) => card.status)).toEqual(['ok', 'ok', 'ok']);
  });
});

describeWithSandbox('script sandboxes at once: per user (2) and per turn (1)', () => {
  let ctx: ChatTestContext;
  let bobKey: string;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async (key?: string) => {
    const call = http().post('/v1/chats');
    if (key !== undefined) call.set('authorization', `Bearer ${key}`);
    return (await call.send({}).expect(201)).body.id as string;
  };
  const go = () => writeFileSync(tree().path('skills/waiter/go'), '');
  const scripts = async () => scriptMetrics(await http().get('/metrics').expect(200));

  beforeAll(async () => {
    ctx = await startChatApp(
      [tree().path('skills')],
      {
        'app.scripts.enabled': true,
        'app.scripts.timeout_ms': 10_000,
        'app.scripts.max_concurrent': 4,
        'app.scripts.max_concurrent_per_user': 2,
        'app.scripts.max_concurrent_per_turn': 1,
      },
      (url) => ({
        scripted: {
          provider: 'openai-compatible',
          base_url: url,
          model: 'scripted-1',
          timeout_ms: 60_000,
          max_retries: 0,
        },
      }),
    );
    const bob = (await http().post('/v1/admin/users').send({ name: 'bob' }).expect(201)).body.id as string;
    bobKey = (await http().post(`/v1/admin/users/${bob}/keys`).send({ label: 'test' }).expect(201)).body.key as string;
  });
  afterEach(() => rmSync(tree().path('skills/waiter/go'), { force: true }));
  afterAll(async () => ctx?.close());

  it(
    'runs one script of a turn at a time: its other calls of the same step are SCRIPTS_BUSY, telling the model to ' +
      'go one by one',
    async () => {
      const chat = await newChat();
      ctx.model.play(
        {
          toolCalls: ['a', 'b', 'c'].map((tag) => ({
            name: 'skills_runScript',
            arguments: { name: 'waiter', path: 'scripts/wait.sh', args: [tag] },
          })),
        },
        { text: 'done' },
      );
      const turn = http()
        .post(`/v1/chats/${chat}/messages`)
        .send({ content: 'three' })
        .then((answer) => answer);
      await waitFor(async () => {
        const now = await scripts();
        return now.running === 1 && now.refused.turn === 2;
      });
      go();
      const cards = (await turn).body.assistantMessage.toolCards as Card[];
      expect(cards.filter((card) => card.status === 'ok')).toHaveLength(1);
      expect(cards.filter((card) => card.status === 'error').map((card) => card.output)).toEqual(
        Array.from(
          { length: 2 },
          () =>
            'Error (SCRIPTS_BUSY): This turn is already running 1 script at once ([app.scripts] ' +
            'max_concurrent_per_turn), so this script did not run. Run scripts one at a time: call it again once ' +
            'the running ones have answered.',
        ),
      );
    },
  );

  it("caps one user across two chats, and leaves another user's scripts free to run", async () => {
    const [first, second, third] = [await newChat(), await newChat(), await newChat()];
    ctx.model.answerWith((sent) =>
      sent.body.messages.some((m) => m.role === 'tool')
        ? { text: 'done' }
        : {
            toolCalls: [
              { name: 'skills_runScript', arguments: { name: 'waiter', path: 'scripts/wait.sh', args: ['held'] } },
            ],
          },
    );
    const turns = [first, second].map((chat) =>
      http()
        .post(`/v1/chats/${chat}/messages`)
        .send({ content: 'hold one' })
        .then((answer) => answer),
    );
    await waitFor(async () => (await scripts()).running === 2);
    const mine = (
      await http()
        .post(`/v1/chats/${third}/tools/skills.runScript`)
        .send({ name: 'waiter', path: 'scripts/quick.sh' })
        .expect(200)
    ).body.toolCard;
    expect(mine).toMatchObject({
      status: 'error',
      output:
        'Error (SCRIPTS_BUSY): This user is already running 2 scripts at once, in this chat or others ' +
        '([app.scripts] max_concurrent_per_user), so this script did not run. Call it again once one of them ' +
        'has finished.',
    });
    const bobChat = await newChat(bobKey);
    const bobs = (
      await http()
        .post(`/v1/chats/${bobChat}/tools/skills.runScript`)
        .set('authorization', `Bearer ${bobKey}`)
        .send({ name: 'waiter', path: 'scripts/quick.sh', args: ['bob'] })
        .expect(200)
    ).body.toolCard;
    expect(bobs).toMatchObject({ status: 'ok', output: expect.stringMatching(/quick bob\n$/) });
    go();
    for (const answer of await Promise.all(turns)) {
      expect(answer.status).toBe(201);
      expect(answer.body.assistantMessage.toolCards[0]).toMatchObject({
        status: 'ok',
        output: expect.stringMatching(/ran held\n$/),
      });
    }
    expect(await scripts()).toEqual({ running: 0, refused: { turn: 2, user: 1 } });
  });
});

/** `skillhost_scripts_running` and `skillhost_scripts_refused_total` by cap, from a /metrics answer. */
function scriptMetrics(answer: { text: string }): { running: number; refused: Record<string, number> } {
  const running = Number(/^skillhost_scripts_running (\d+)$/m.exec(answer.text)?.[1]);
  const refused = Object.fromEntries(
    [...answer.text.matchAll(/^skillhost_scripts_refused_total\{limit="(\w+)"\} (\d+)$/gm)].map(([, limit, count]) => [
      limit,
      Number(count),
    ]),
  );
  return { running, refused };
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
