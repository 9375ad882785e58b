import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import OpenAI from 'openai';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { useChatSkillsTree } from '../support/files/skill-tree.js';

/**
 * A model of another provider behind the gateway: the client speaks OpenAI's wire format, Skillhost calls Anthropic's
 * Messages API (the scripted server answers it), and the skill call the model makes there is run by Skillhost.
 */
const chatSkills = useChatSkillsTree();

describe('an Anthropic model through the OpenAI-compatible gateway', () => {
  let ctx: ChatTestContext;
  let openai: OpenAI;

  beforeAll(async () => {
    ctx = await startChatApp(
      [chatSkills().path('skills')],
      { 'app.default_model': 'claude' },
      (url) => ({
        claude: {
          provider: 'anthropic',
          base_url: url,
          model: 'claude-sonnet-4-5',
          api_key_env: 'TEST_ANTHROPIC_KEY',
          timeout_ms: 10_000,
          max_retries: 0,
        },
      }),
      { TEST_ANTHROPIC_KEY: 'sk-ant-test' },
    );
    await ctx.app.listen(0, '127.0.0.1');
    const port = (ctx.app.getHttpServer().address() as AddressInfo).port;
    // The SDK always sends a key, and a key that is sent is checked, auth off or not: a real one.
    const users = ctx.app.get(UsersService);
    const { key } = await users.createKey((await users.createUser('ann', 'member')).id);
    openai = new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}/openai/v1`, maxRetries: 0 });
  });
  afterAll(async () => ctx?.close());

  it('answers chat completions, whole and streamed, from the Messages API, skill calls included', async () => {
    ctx.model.play({ toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] }, { text: 'Via Claude.' });
    const answer = await openai.chat.completions.create({
      model: 'claude',
      messages: [
        { role: 'system', content: 'CLIENT-SYSTEM' },
        { role: 'user', content: 'a pdf' },
      ],
    });
    expect(answer.choices[0].message.content).toBe('Via Claude.');
    expect(answer.model).toBe('claude');
    const [first, second] = ctx.model.requests;
    expect(first.api).toBe('anthropic');
    expect(JSON.stringify(first.body)).toContain('Works with PDF files.');
    expect(JSON.stringify(first.body)).toContain('CLIENT-SYSTEM');
    expect(JSON.stringify(second.body)).toContain('PDF-BODY-MARKER');

    ctx.model.play({ text: 'Streamed via Claude.' });
    const stream = await openai.chat.completions.create({
      model: 'claude',
      messages: [{ role: 'user', content: 'stream' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Streamed via Claude.');
  });
});
