import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { corpusPath } from '../support/files/corpus.js';
import { type RecordedRequest, ScriptedModelServer } from '../support/scripted-model-server.js';
import { type TempTree, useSkillTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * Issue 13, choosing skills at scale: the catalogue in the system prompt within
 * `catalogue_budget_tokens` / `catalogue_max_skills`, the pinned skills, the closing note,
 * `skills_search`, and the REST and GraphQL routes that show the same choice.
 */

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/** The label before a whole catalogue (in the skills section) and before a partial one (last in the prompt). */
const LABELS = [
  'Available skills:\n',
  'Available skills (the most relevant to this conversation; skills_search finds the others):\n',
  'Available skills (the most relevant to this conversation):\n',
];

/** The catalogue text of a system prompt: what follows its label, up to the next block. */
function catalogueOf(systemPrompt: string): string {
  const label = LABELS.find((candidate) => systemPrompt.includes(candidate));
  if (label === undefined) throw new Error(`no catalogue in the system prompt:\n${systemPrompt}`);
  const rest = systemPrompt.slice(systemPrompt.indexOf(label) + label.length);
  const end = rest.indexOf('\n\n');
  return end < 0 ? rest : rest.slice(0, end);
}

interface JsonCatalogue {
  available_skills: { name: string; description: string; location?: string }[];
  unlisted_skills?: { count: number; note: string };
}

const jsonCatalogue = (text: string) => JSON.parse(text) as JsonCatalogue;
const listedNames = (text: string) => jsonCatalogue(text).available_skills.map((s) => s.name);
const promptOf = (sent: RecordedRequest) => ScriptedModelServer.systemPrompt(sent);
const toolNames = (sent: RecordedRequest) => (sent.body.tools ?? []).map((t) => t.function.name);
const toolResults = (sent: RecordedRequest) =>
  sent.body.messages.filter((m) => m.role === 'tool').map((m) => m.content as string);

/** Scores of a result list never go up (best first). */
function expectNonIncreasing(query: string, results: { name: string; score: number }[]): void {
  for (let i = 1; i < results.length; i++) {
    if (results[i].score > results[i - 1].score) {
      const all = results.map((r) => `${r.name} ${r.score}`).join(', ');
      throw new Error(
        `for "${query}" scores go up at position ${i}: ${results[i - 1].score} then ${results[i].score} (${all})`,
      );
    }
  }
}

interface XmlNode {
  name: string;
  attributes: Record<string, string>;
  children: XmlNode[];
  text: string;
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/**
 * A strict, tiny XML parser (elements, double-quoted attributes, the five predefined entities):
 * enough to prove the catalogue is well-formed XML and to read it back. Throws on anything else.
 */
function parseXml(source: string): XmlNode {
  const decode = (text: string) => {
    if (/<|&(?!(amp|lt|gt|quot|apos);)/.test(text))
      throw new Error(`unescaped markup in text: ${JSON.stringify(text.slice(0, 80))}`);
    return text.replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => XML_ENTITIES[name]);
  };
  const tag = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.-]*="[^"<]*")*)\s*(\/?)>/g;
  const root: XmlNode = { name: '#document', attributes: {}, children: [], text: '' };
  const stack: XmlNode[] = [root];
  let at = 0;
  for (let match = tag.exec(source); match !== null; match = tag.exec(source)) {
    const between = source.slice(at, match.index);
    stack[stack.length - 1].text += decode(between);
    at = match.index + match[0].length;
    const [, closing, name, attributeText, selfClosing] = match;
    if (closing) {
      const open = stack.pop();
      if (open?.name !== name) throw new Error(`</${name}> closes <${open?.name}>`);
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const [, key, value] of attributeText.matchAll(/([A-Za-z_][\w.-]*)="([^"<]*)"/g))
      attributes[key] = decode(value);
    const node: XmlNode = { name, attributes, children: [], text: '' };
    stack[stack.length - 1].children.push(node);
    if (!selfClosing) stack.push(node);
  }
  const tail = source.slice(at);
  if (stack.length !== 1) throw new Error(`unclosed <${stack[stack.length - 1].name}>`);
  if (tail.trim() !== '' || root.text.trim() !== '') throw new Error('text outside the root element');
  if (root.children.length !== 1) throw new Error(`expected one root element, got ${root.children.length}`);
  return root.children[0];
}

/** A realistic turn's tool call. */
const call = (name: string, args: Record<string, unknown>) => ({ toolCalls: [{ name, arguments: args }] });

// ---------------------------------------------------------------------------------------------
// 1. The shared corpus (~2,000 real skills): far over the default budget.
// ---------------------------------------------------------------------------------------------

describe('a corpus of ~2,000 real skills: the catalogue is a ranked subset within the budget', () => {
  let ctx: ChatTestContext;
  let total: number;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  const send = async (chat: string, content: string) =>
    (await http().post(`/v1/chats/${chat}/messages`).send({ content }).expect(201)).body;

  beforeAll(async () => {
    ctx = await startChatApp([corpusPath()], {
      'app.skills.validation': 'lenient',
      'app.skills.max_depth': 6,
      'app.skills.max_skills': 100_000,
    });
    total = (await http().get('/v1/skills').expect(200)).body.count;
  }, 120_000);
  afterAll(async () => ctx?.close());

  it('loads well over the default budget', () => {
    expect(total).toBeGreaterThan(1500);
  });

  it(
    'a turn lists a relevant subset within 4000 o200k tokens and at most 50 skills, closed by the note; the model ' +
      'is offered skills_search',
    async () => {
      const chat = await newChat();
      ctx.model.play({ text: 'Here is the workflow.' });
      await send(chat, 'set up a CI pipeline with GitHub Actions');
      const [sent] = ctx.model.requests;
      const system = promptOf(sent);
      const catalogue = catalogueOf(system);
      expect(countTokens(catalogue)).toBeLessThanOrEqual(4000);
      const parsed = jsonCatalogue(catalogue);
      expect(parsed.available_skills.length).toBeGreaterThan(0);
      expect(parsed.available_skills.length).toBeLessThanOrEqual(50);
      expect(parsed.unlisted_skills).toEqual({
        count: total - parsed.available_skills.length,
        note: `${
          total - parsed.available_skills.length
        } more skills are not listed here: find them with the skills_search tool when no listed skill fits the task.`,
      });
      // Relevant skills lead: the GitHub Actions templates are listed, and near the top.
      const names = parsed.available_skills.map((s) => s.name);
      expect(names.slice(0, 5)).toContain('github-actions-templates');
      // The catalogue is the last thing in the prompt, after every rule; the rule says how to search.
      expect(system).toContain(
        '- The catalogue lists only some of the skills: when none listed fits the task, find one with ' +
          'skills_search, then use it.',
      );
      expect(system).toContain(
        'The catalogue at the end of this prompt lists, by name and description, the skills most relevant to this ' +
          'conversation.',
      );
      expect(system.endsWith(catalogueOf(system))).toBe(true);
      expect(toolNames(sent)).toEqual(expect.arrayContaining(['skills_activate', 'skills_search']));
      const search = sent.body.tools!.find((t) => t.function.name === 'skills_search')!;
      expect(search.function.parameters).toMatchObject({
        properties: { query: expect.any(Object), limit: expect.any(Object) },
        required: ['query'],
      });
    },
  );

  it('a PDF request lists PDF skills; the catalogue differs from a CI request (ranked per turn)', async () => {
    const chat = await newChat();
    ctx.model.play({ text: 'ok' });
    await send(chat, 'extract the tables from this PDF');
    const catalogue = catalogueOf(promptOf(ctx.model.requests[0]));
    expect(countTokens(catalogue)).toBeLessThanOrEqual(4000);
    const names = listedNames(catalogue);
    // The corpus has no `pdf` skill of its own; the PDF ones it has must be there.
    expect(names).toEqual(expect.arrayContaining(['view-pdf', 'markitdown']));
    expect(names.slice(0, 10).some((name) => /pdf/i.test(name))).toBe(true);
    const ci = (
      await http().get('/v1/skills-catalogue').query({ query: 'set up a CI pipeline with GitHub Actions' }).expect(200)
    ).text;
    expect(ci).not.toBe(catalogue);
  });

  it('a skill the model activated is listed first in the next turn, even for an unrelated message', async () => {
    const unrelated = 'set up a CI pipeline with GitHub Actions';
    // For this message alone, astropy is not in the catalogue.
    expect(
      listedNames((await http().get('/v1/skills-catalogue').query({ query: unrelated }).expect(200)).text),
    ).not.toContain('astropy');

    const chat = await newChat();
    ctx.model.play(call('skills_activate', { name: 'astropy' }), { text: 'Converted the coordinates.' });
    const first = await send(chat, 'convert these sky coordinates from ICRS to galactic');
    expect(first.assistantMessage.toolCards).toEqual([
      expect.objectContaining({ tool: 'skills.activate', args: { name: 'astropy' }, status: 'ok' }),
    ]);
    expect(first.activatedSkills).toEqual([expect.objectContaining({ name: 'astropy' })]);

    ctx.model.play({ text: 'Here is the workflow.' });
    await send(chat, unrelated);
    const system = promptOf(ctx.model.requests[0]);
    const catalogue = catalogueOf(system);
    const names = listedNames(catalogue);
    expect(names[0]).toBe('astropy');
    expect(names).toContain('github-actions-templates');
    expect(countTokens(catalogue)).toBeLessThanOrEqual(4000);
    expect(system).toContain('Skills already activated in this chat: astropy.');
    // The context route says the same for the same message.
    const context = (await http().get(`/v1/chats/${chat}/context`).query({ message: unrelated }).expect(200)).body;
    expect(context.catalogue.listed[0]).toBe('astropy');
  });

  it('/name invocation lists the invoked skill first', async () => {
    const message = 'set up a CI pipeline with GitHub Actions';
    expect(
      listedNames((await http().get('/v1/skills-catalogue').query({ query: message }).expect(200)).text),
    ).not.toContain('astropy');
    const chat = await newChat();
    ctx.model.play({ text: 'Using astropy.' });
    const turn = await send(chat, `/astropy ${message}`);
    expect(turn).toMatchObject({ invokedSkill: 'astropy', invokedSkills: ['astropy'] });
    const system = promptOf(ctx.model.requests[0]);
    const names = listedNames(catalogueOf(system));
    expect(names[0]).toBe('astropy');
    expect(names).toContain('github-actions-templates');
    expect(system).toContain("The user invoked the skill 'astropy' for this message: use it.");
  });

  it('the model finds with skills_search a skill the catalogue did not list, and can activate it', async () => {
    const chat = await newChat();
    ctx.model.play(
      call('skills_search', { query: 'current weather conditions and forecast', limit: 5 }),
      call('skills_activate', { name: 'ambient-weather-automation' }),
      { text: 'Done.' },
    );
    const turn = await send(chat, 'set up a CI pipeline with GitHub Actions');
    const [first, second, third] = ctx.model.requests;
    const listed = listedNames(catalogueOf(promptOf(first)));
    expect(listed).not.toContain('forecast');
    expect(listed).not.toContain('ambient-weather-automation');
    expect(toolNames(first)).toContain('skills_search');

    // The tool result the model read: JSON results, best first, at most `limit`.
    const [output] = toolResults(second);
    const { results } = JSON.parse(output) as { results: { name: string; description: string; score: number }[] };
    expect(results.length).toBeGreaterThan(0);
    expect(results.length).toBeLessThanOrEqual(5);
    expect(results.map((r) => r.name)).toEqual(expect.arrayContaining(['ambient-weather-automation']));
    for (const result of results) {
      expect(result).toEqual({ name: expect.any(String), description: expect.any(String), score: expect.any(Number) });
      expect(result.score).toBeGreaterThanOrEqual(0);
      expect(result.score).toBeLessThanOrEqual(1);
    }
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({
      tool: 'skills.search',
      args: { query: 'current weather conditions and forecast', limit: 5 },
      status: 'ok',
      output,
    });
    // What the tool answered is what the REST route answers.
    const rest = (
      await http()
        .get('/v1/skills/search')
        .query({ q: 'current weather conditions and forecast', limit: 5 })
        .expect(200)
    ).body;
    expect(rest).toEqual({ results });
    // And the skill it found can be activated like a listed one.
    expect(turn.assistantMessage.toolCards[1]).toMatchObject({
      tool: 'skills.activate',
      args: { name: 'ambient-weather-automation' },
      status: 'ok',
    });
    expect(toolResults(third)).toHaveLength(2);
  });

  it('skills_search with a query nothing matches answers the "No skill matches" sentence', async () => {
    const chat = await newChat();
    ctx.model.play(call('skills_search', { query: 'zzqqxxjj' }), { text: 'No skill for that.' });
    const turn = await send(chat, 'zzqqxxjj');
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({
      tool: 'skills.search',
      status: 'ok',
      output: expect.stringMatching(/^No skill matches "zzqqxxjj"/),
    });
    expect(toolResults(ctx.model.requests[1])[0]).toMatch(/^No skill matches "zzqqxxjj"/);
  });

  it('the context route with ?message= shows exactly what that turn then sends', async () => {
    const chat = await newChat();
    const message = 'extract the tables from this PDF';
    const context = (await http().get(`/v1/chats/${chat}/context`).query({ message }).expect(200)).body;
    ctx.model.play({ text: 'ok' });
    await send(chat, message);
    const [sent] = ctx.model.requests;
    expect(promptOf(sent)).toBe(context.systemPrompt);
    expect(listedNames(catalogueOf(promptOf(sent)))).toEqual(context.catalogue.listed);
    expect(context.catalogue).toMatchObject({
      complete: false,
      unlisted: total - context.catalogue.listed.length,
      budgetTokens: 4000,
      maxSkills: 50,
    });
    expect(context.catalogue.tokens).toBeLessThanOrEqual(4000);
    expect(countTokens(catalogueOf(context.systemPrompt))).toBeLessThanOrEqual(context.catalogue.tokens);
    expect(context.tools.map((t: { wireName: string }) => t.wireName)).toEqual(toolNames(sent));
    // A new chat's first turn: GET /v1/skills-catalogue?query= is the same text.
    expect((await http().get('/v1/skills-catalogue').query({ query: message }).expect(200)).text).toBe(
      catalogueOf(context.systemPrompt),
    );
  });

  it('search results come best first: scores never increase down the list', async () => {
    // Results come best first and their scores say so (a score once disagreed with the order).
    for (const q of ['set up a CI pipeline with GitHub Actions', 'extract the tables from this PDF']) {
      const { results } = (await http().get('/v1/skills/search').query({ q, limit: 20 }).expect(200)).body as {
        results: { name: string; score: number }[];
      };
      expect(results.length).toBeGreaterThan(1);
      expectNonIncreasing(q, results);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 2. The bundled skills: the whole catalogue fits, byte-identical every turn.
// ---------------------------------------------------------------------------------------------

const BUNDLED = resolve(process.cwd(), 'skills');
const BUNDLED_NAMES = ['code-review', 'git-commit', 'skills-system-validation'];

describe('the bundled skills fit the budget: the whole catalogue, the same bytes every turn', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  beforeAll(async () => {
    ctx = await startChatApp([BUNDLED]);
  });
  afterAll(async () => ctx?.close());

  it(
    'two turns with different messages get the same catalogue, equal to GET /v1/skills-catalogue, without a note ' +
      'or skills_search',
    async () => {
      const whole = (await http().get('/v1/skills-catalogue').expect(200)).text;
      expect(listedNames(whole)).toEqual(BUNDLED_NAMES);
      const chat = (await http().post('/v1/chats').send({}).expect(201)).body.id;
      const other = (await http().post('/v1/chats').send({}).expect(201)).body.id;
      const prompts: string[] = [];
      for (const [id, content] of [
        [chat, 'review my pull request for security issues'],
        [chat, 'write a commit message for these changes'],
        [other, 'extract the tables from this PDF'],
      ]) {
        ctx.model.play({ text: 'ok' });
        await http().post(`/v1/chats/${id}/messages`).send({ content }).expect(201);
        const [sent] = ctx.model.requests;
        prompts.push(promptOf(sent));
        expect(toolNames(sent)).not.toContain('skills_search');
        expect(toolNames(sent)).toContain('skills_activate');
      }
      for (const prompt of prompts) {
        expect(catalogueOf(prompt)).toBe(whole);
        expect(prompt).toBe(prompts[0]);
        expect(prompt).not.toContain('unlisted_skills');
        expect(prompt).not.toContain('skills_search');
        expect(prompt).toContain('The catalogue below lists each by name and description.');
      }
      expect(jsonCatalogue(whole).unlisted_skills).toBeUndefined();
      // With a message, the catalogue route is still the whole catalogue.
      expect(
        (await http().get('/v1/skills-catalogue').query({ query: 'write a commit message' }).expect(200)).text,
      ).toBe(whole);
    },
  );

  it('the context route reports a complete catalogue whatever the message', async () => {
    const chat = (await http().post('/v1/chats').send({}).expect(201)).body.id;
    const whole = (await http().get('/v1/skills-catalogue').expect(200)).text;
    for (const message of ['review my code', 'something else entirely', undefined]) {
      const context = (
        await http()
          .get(`/v1/chats/${chat}/context`)
          .query(message === undefined ? {} : { message })
          .expect(200)
      ).body;
      expect(context.catalogue).toEqual({
        complete: true,
        listed: BUNDLED_NAMES,
        unlisted: 0,
        tokens: expect.any(Number),
        budgetTokens: 4000,
        maxSkills: 50,
      });
      expect(context.catalogue.tokens).toBeLessThanOrEqual(4000);
      expect(catalogueOf(context.systemPrompt)).toBe(whole);
      expect(context.tools.map((t: { wireName: string }) => t.wireName)).not.toContain('skills_search');
    }
  });

  it('search still works over REST although the model is not offered the tool', async () => {
    const { results } = (await http().get('/v1/skills/search').query({ q: 'write a commit message' }).expect(200)).body;
    expect(results[0].name).toBe('git-commit');
  });
});

describe('the bundled skills with search_tool = "always": the whole catalogue, and skills_search offered', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  beforeAll(async () => {
    ctx = await startChatApp([BUNDLED], { 'app.skills.search_tool': 'always' });
  });
  afterAll(async () => ctx?.close());

  it('offers skills_search with a complete catalogue (no note), and the tool answers', async () => {
    const whole = (await http().get('/v1/skills-catalogue').expect(200)).text;
    const chat = (await http().post('/v1/chats').send({}).expect(201)).body.id;
    ctx.model.play(call('skills_search', { query: 'write a good commit message' }), { text: 'Found it.' });
    const turn = (
      await http().post(`/v1/chats/${chat}/messages`).send({ content: 'help me write a commit message' }).expect(201)
    ).body;
    const [sent, after] = ctx.model.requests;
    expect(toolNames(sent)).toContain('skills_search');
    const system = promptOf(sent);
    expect(catalogueOf(system)).toBe(whole);
    expect(system).not.toContain('unlisted_skills');
    expect(system).toContain('- To find a skill by what it does, use skills_search.');
    expect(system).not.toContain('The catalogue lists only some of the skills');
    const { results } = JSON.parse(toolResults(after)[0]);
    expect(results[0].name).toBe('git-commit');
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({ tool: 'skills.search', status: 'ok' });
    const context = (await http().get(`/v1/chats/${chat}/context`).query({ message: 'anything' }).expect(200)).body;
    expect(context.catalogue.complete).toBe(true);
    expect(context.tools.map((t: { wireName: string }) => t.wireName)).toContain('skills_search');
  });
});

// ---------------------------------------------------------------------------------------------
// 3. A small budget over ~20 real skill folders written for the test.
// ---------------------------------------------------------------------------------------------

const LONG_CONTRACT =
  'Reviews commercial contracts clause by clause: indemnification, limitation of liability, termination for ' +
  'convenience, assignment, governing law, ' +
  'confidentiality, data protection addenda, service levels and their credits, intellectual property ownership ' +
  'and licence grants, warranties and disclaimers, ' +
  'insurance requirements, audit rights, subcontracting, non-solicitation, change of control, ' +
  'most-favoured-customer terms, exclusivity, renewal and price escalation. ' +
  'Flags one-sided or unusual language, compares each clause with the playbook positions, proposes redlines ' +
  'with fallback wording, and writes a summary memo ' +
  'for the business owner listing the open risks by severity. Use when the user shares a contract, an NDA or an ' +
  'order form to review.';
const LONG_TRIAL =
  'Writes clinical study reports for interventional trials following the ICH E3 structure: synopsis, ethics, ' +
  'investigators and administrative structure, ' +
  'study objectives, investigational plan, study patients and dispositions, protocol deviations, efficacy ' +
  'evaluation with primary and secondary endpoints, ' +
  'safety evaluation with adverse events, serious adverse events, deaths, laboratory values, vital signs and ' +
  'exposure, discussion and overall conclusions, ' +
  'tables, figures and listings referred to but not included in the text, and the appendices. Checks ' +
  'consistency between the statistical analysis plan and ' +
  'the reported analyses. Use when the user asks for a CSR, a clinical trial report or a regulatory submission ' +
  'section.';

const SMALL_SET: Record<string, string> = {
  'pdf-tables':
    'Extract tables and text from PDF files into CSV or Excel. Use when the user wants to pull tables out of a PDF.',
  'pdf-forms': 'Fill in, flatten and read PDF forms and their fields. Use for PDF form filling.',
  'github-actions': 'Set up, fix and speed up CI pipelines with GitHub Actions workflows: caching, matrices, secrets.',
  'docker-compose': 'Write Dockerfiles and docker compose files for local development and deployment.',
  'kubernetes-deploy': 'Deploy services to Kubernetes with manifests, Helm charts, probes and rolling updates.',
  'terraform-aws': 'Write Terraform modules for AWS infrastructure: VPCs, IAM roles, S3 buckets and RDS.',
  'sql-tuning': 'Tune slow SQL queries: read query plans, add indexes, rewrite joins.',
  'postgres-migrations': 'Write safe PostgreSQL schema migrations without locking large tables.',
  'react-components': 'Build accessible React components with hooks, props typing and tests.',
  'css-layout': 'Fix CSS layouts with flexbox and grid; responsive design and dark mode.',
  'python-testing': 'Write pytest unit tests with fixtures, parametrisation and mocks for Python code.',
  'git-commit': 'Write clear git commit messages from a staged diff, in the conventional commits style.',
  'code-review': 'Review a pull request for bugs, security issues and readability; suggest concrete changes.',
  changelog: 'Write release notes and a CHANGELOG entry from merged pull requests.',
  'slack-notify': 'Post messages and alerts to Slack channels through an incoming webhook.',
  'email-drafting': 'Draft emails & replies; keeps <signature> blocks and "quoted" text intact.',
  'spreadsheet-formulas': 'Write Excel and Google Sheets formulas: lookups, pivot tables, conditional formatting.',
  'image-resize': 'Resize, crop and convert images in bulk (PNG, JPEG, WebP) with ImageMagick.',
  'translate-docs': 'Translate documentation between English, Spanish and French, keeping markdown intact.',
  'weather-report': 'Fetch the weather forecast for a city and summarise it.',
  'contract-review': LONG_CONTRACT,
  'clinical-report': LONG_TRIAL,
};
const SMALL_NAMES = Object.keys(SMALL_SET).sort();
const SMALL_TOTAL = SMALL_NAMES.length;

function writeSmallSet(tree: TempTree): void {
  for (const [name, description] of Object.entries(SMALL_SET)) {
    // Single-quoted YAML: the descriptions hold `&`, `<`, `"` and `:`.
    writeSkill(tree, 'skills', name, {
      description: `'${description.replace(/'/g, "''")}'`,
      body: `# ${name}\n\nSteps for ${name}.\n`,
    });
  }
  // A command whose prompt is about CI and which requires git-commit.
  tree.write(
    'commands/ship.md',
    '---\ndescription: Ship the release.\nrequires-skills: [git-commit]\n---\nSet up a CI pipeline with GitHub ' +
      'Actions for the release, then $ARGUMENTS\n',
  );
}

const BUDGET = 300;
const MESSAGES = [
  'extract the tables from this PDF',
  'set up a CI pipeline with GitHub Actions',
  'write SQL queries and postgres migrations, then test the python code',
  'review this pull request and write the commit message and changelog',
  'draft an email reply to the customer',
  'what is the weather in Paris',
  'deploy with docker compose and kubernetes, terraform the AWS side',
  'nothing matches qqzzxx',
];

describe(`a small budget (${BUDGET} tokens) over ${SMALL_TOTAL} skills`, () => {
  const tree = useSkillTree(writeSmallSet);
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  const contextOf = async (chat: string, message: string) =>
    (await http().get(`/v1/chats/${chat}/context`).query({ message }).expect(200)).body;
  const activate = async (chat: string, name: string) => {
    const run = (await http().post(`/v1/chats/${chat}/tools/skills.activate`).send({ name }).expect(200)).body;
    expect(run.toolCard).toMatchObject({ status: 'ok' });
  };
  const graphql = async (query: string, variables?: Record<string, unknown>) =>
    (await http().post('/graphql').send({ query, variables }).expect(200)).body;

  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')], {
      'app.skills.catalogue_budget_tokens': BUDGET,
      'app.commands.directories': [tree().path('commands')],
    });
  });
  afterAll(async () => ctx?.close());

  it('all skills load, and together they do not fit', async () => {
    expect((await http().get('/v1/skills').expect(200)).body.skills.map((s: { name: string }) => s.name)).toEqual(
      SMALL_NAMES,
    );
    const whole = (await http().get('/v1/skills-catalogue').expect(200)).text;
    expect(countTokens(whole)).toBeGreaterThan(BUDGET);
    expect(listedNames(whole)).toEqual(SMALL_NAMES);
  });

  it('every message gets a partial catalogue within the budget, its count and note consistent', async () => {
    const chat = await newChat();
    for (const message of MESSAGES) {
      const { catalogue, systemPrompt } = await contextOf(chat, message);
      const text = catalogueOf(systemPrompt);
      const parsed = jsonCatalogue(text);
      expect(catalogue).toMatchObject({ complete: false, budgetTokens: BUDGET, maxSkills: 50 });
      expect(parsed.available_skills.map((s) => s.name)).toEqual(catalogue.listed);
      expect(catalogue.unlisted).toBe(SMALL_TOTAL - catalogue.listed.length);
      expect(parsed.unlisted_skills?.count).toBe(catalogue.unlisted);
      expect(parsed.unlisted_skills?.note).toMatch(/not listed here: find them with the skills_search tool/);
      expect(countTokens(text)).toBeLessThanOrEqual(catalogue.tokens);
      expect(catalogue.tokens).toBeLessThanOrEqual(BUDGET);
      // Whole entries only: each listed entry is a skill's full description.
      for (const entry of parsed.available_skills) expect(entry.description).toBe(SMALL_SET[entry.name]);
    }
  });

  it('relevant skills lead the catalogue', async () => {
    const chat = await newChat();
    expect((await contextOf(chat, 'extract the tables from this PDF')).catalogue.listed[0]).toBe('pdf-tables');
    expect((await contextOf(chat, 'set up a CI pipeline with GitHub Actions')).catalogue.listed[0]).toBe(
      'github-actions',
    );
    expect((await contextOf(chat, 'what is the weather in Paris')).catalogue.listed[0]).toBe('weather-report');
  });

  it('a message nothing matches lists no skill, only the note', async () => {
    const chat = await newChat();
    const { catalogue, systemPrompt } = await contextOf(chat, 'qqzzxx');
    expect(catalogue).toMatchObject({ complete: false, listed: [], unlisted: SMALL_TOTAL });
    expect(jsonCatalogue(catalogueOf(systemPrompt))).toEqual({
      available_skills: [],
      unlisted_skills: {
        count: SMALL_TOTAL,
        note:
          `${SMALL_TOTAL} more skills are not listed here: find them with the skills_search tool when no listed ` +
          `skill fits the task.`,
      },
    });
  });

  it('the context route with ?message= agrees with what each turn then sends, history included', async () => {
    const chat = await newChat();
    const script: [string, Parameters<ScriptedModelServer['play']>][] = [
      ['extract the tables from this PDF', [call('skills_activate', { name: 'pdf-tables' }), { text: 'Extracted.' }]],
      ['now put them in a spreadsheet with a pivot table', [{ text: 'Done.' }]],
      ['and email the result to the team', [{ text: 'Drafted.' }]],
    ];
    for (const [message, steps] of script) {
      const context = await contextOf(chat, message);
      ctx.model.play(...steps);
      await http().post(`/v1/chats/${chat}/messages`).send({ content: message }).expect(201);
      const [sent] = ctx.model.requests;
      expect(promptOf(sent)).toBe(context.systemPrompt);
      expect(listedNames(catalogueOf(promptOf(sent)))).toEqual(context.catalogue.listed);
      expect(toolNames(sent)).toEqual(context.tools.map((t: { wireName: string }) => t.wireName));
      expect(toolNames(sent)).toContain('skills_search');
    }
    // pdf-tables, activated in the first turn, stays listed first.
    expect((await contextOf(chat, 'draft an email reply')).catalogue.listed[0]).toBe('pdf-tables');
  });

  it("GET /v1/skills-catalogue?query= is the catalogue of a new chat's first turn with that message", async () => {
    for (const message of MESSAGES.slice(0, 4)) {
      const expected = (await http().get('/v1/skills-catalogue').query({ query: message }).expect(200)).text;
      const chat = await newChat();
      ctx.model.play({ text: 'ok' });
      await http().post(`/v1/chats/${chat}/messages`).send({ content: message }).expect(201);
      expect(catalogueOf(promptOf(ctx.model.requests[0]))).toBe(expected);
    }
  });

  const INVOKED = '/weather-report extract the tables from this PDF';

  it('/name: the context route lists the same catalogue as the turn, the invoked skill first', async () => {
    const chat = await newChat();
    const context = await contextOf(chat, INVOKED);
    expect(context.catalogue.listed[0]).toBe('weather-report');
    expect(context.catalogue.listed).toContain('pdf-tables');
    ctx.model.play({ text: 'ok' });
    await http().post(`/v1/chats/${chat}/messages`).send({ content: INVOKED }).expect(201);
    const system = promptOf(ctx.model.requests[0]);
    expect(catalogueOf(system)).toBe(catalogueOf(context.systemPrompt));
    expect(listedNames(catalogueOf(system))).toEqual(context.catalogue.listed);
  });

  it("/name: the context route's systemPrompt is exactly the turn's", async () => {
    // The context's prompt says what the turn's says: "The user invoked the skill 'weather-report'…".
    const chat = await newChat();
    const context = await contextOf(chat, INVOKED);
    ctx.model.play({ text: 'ok' });
    await http().post(`/v1/chats/${chat}/messages`).send({ content: INVOKED }).expect(201);
    expect(promptOf(ctx.model.requests[0])).toBe(context.systemPrompt);
  });

  it("/name: GET /v1/skills-catalogue?query= is the catalogue of a new chat's first turn", async () => {
    // The query is read as a turn reads it: the `/name` invocation pins the skill first.
    const expected = (await http().get('/v1/skills-catalogue').query({ query: INVOKED }).expect(200)).text;
    const chat = await newChat();
    ctx.model.play({ text: 'ok' });
    await http().post(`/v1/chats/${chat}/messages`).send({ content: INVOKED }).expect(201);
    expect(listedNames(catalogueOf(promptOf(ctx.model.requests[0])))[0]).toBe('weather-report');
    expect(catalogueOf(promptOf(ctx.model.requests[0]))).toBe(expected);
  });

  it('a command: the context route lists the catalogue the turn then sends (its required skill pinned)', async () => {
    // A command is read as a turn reads it: its expanded prompt is ranked, its required skills pinned.
    const message = '/ship post the release notes to Slack';
    const chat = await newChat();
    const context = await contextOf(chat, message);
    ctx.model.play({ text: 'ok' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: message }).expect(201)).body;
    expect(turn.command).toMatchObject({ name: 'ship' });
    const sent = listedNames(catalogueOf(promptOf(ctx.model.requests[0])));
    expect(sent[0]).toBe('git-commit');
    expect(sent).toContain('github-actions');
    expect(context.catalogue.listed).toEqual(sent);
  });

  it('only pinned (activated) skills take the catalogue past the budget', async () => {
    const chat = await newChat();
    // One long pinned skill fits: the others fill what is left, within the budget.
    await activate(chat, 'contract-review');
    let context = await contextOf(chat, 'extract the tables from this PDF');
    expect(context.catalogue.listed[0]).toBe('contract-review');
    expect(context.catalogue.listed.length).toBeGreaterThan(1);
    expect(countTokens(catalogueOf(context.systemPrompt))).toBeLessThanOrEqual(BUDGET);
    expect(context.catalogue.tokens).toBeLessThanOrEqual(BUDGET);

    // Two long pinned skills do not fit: both are listed anyway, and nothing else is.
    await activate(chat, 'clinical-report');
    context = await contextOf(chat, 'extract the tables from this PDF');
    expect([...context.catalogue.listed].sort()).toEqual(['clinical-report', 'contract-review']);
    expect(context.catalogue.tokens).toBeGreaterThan(BUDGET);
    expect(countTokens(catalogueOf(context.systemPrompt))).toBeGreaterThan(BUDGET);
    expect(context.catalogue.unlisted).toBe(SMALL_TOTAL - 2);

    // A turn sends the same.
    ctx.model.play({ text: 'ok' });
    await http().post(`/v1/chats/${chat}/messages`).send({ content: 'extract the tables from this PDF' }).expect(201);
    expect(promptOf(ctx.model.requests[0])).toBe(context.systemPrompt);

    // Invoking a third with /name pins it too.
    const invoked = await contextOf(chat, '/weather-report for Paris');
    expect([...invoked.catalogue.listed].sort()).toEqual(['clinical-report', 'contract-review', 'weather-report']);
  });

  it('each format renders parseable output within the budget, the unlisted count included', async () => {
    const message = 'draft an email reply and review the pull request';
    const listed = (await contextOf(await newChat(), message)).catalogue.listed as string[];
    expect(listed).toContain('email-drafting');

    const json = await http().get('/v1/skills-catalogue').query({ query: message, format: 'json' }).expect(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    const parsed = jsonCatalogue(json.text);
    expect(parsed.available_skills.map((s) => s.name)).toEqual(listed);
    expect(parsed.available_skills.find((s) => s.name === 'email-drafting')?.description).toBe(
      SMALL_SET['email-drafting'],
    );
    expect(parsed.unlisted_skills).toEqual({
      count: SMALL_TOTAL - listed.length,
      note: expect.stringContaining('skills_search'),
    });
    expect(countTokens(json.text)).toBeLessThanOrEqual(BUDGET);

    const xml = await http().get('/v1/skills-catalogue').query({ query: message, format: 'xml' }).expect(200);
    expect(xml.headers['content-type']).toMatch(/^application\/xml/);
    const root = parseXml(xml.text);
    expect(root.name).toBe('available_skills');
    const skills = root.children.filter((c) => c.name === 'skill');
    const xmlListed = skills.map((s) => s.children.find((c) => c.name === 'name')!.text);
    const unlisted = root.children.filter((c) => c.name === 'unlisted_skills');
    expect(unlisted).toHaveLength(1);
    expect(root.children[root.children.length - 1]).toBe(unlisted[0]);
    expect(Number(unlisted[0].attributes.count)).toBe(SMALL_TOTAL - xmlListed.length);
    expect(unlisted[0].text).toContain('skills_search');
    expect(xmlListed).toContain('email-drafting');
    expect(
      skills.find((s) => s.children[0].text === 'email-drafting')!.children.find((c) => c.name === 'description')!.text,
    ).toBe(SMALL_SET['email-drafting']);
    expect(countTokens(xml.text)).toBeLessThanOrEqual(BUDGET);

    const markdown = await http().get('/v1/skills-catalogue').query({ query: message, format: 'markdown' }).expect(200);
    expect(markdown.headers['content-type']).toMatch(/^text\/markdown/);
    const lines = markdown.text.split('\n');
    const last = lines.pop()!;
    const entries = lines.map((line) => /^- ([^:]+): (.+)$/.exec(line));
    expect(entries.every((m) => m !== null)).toBe(true);
    const mdListed = entries.map((m) => m![1]);
    expect(mdListed).toContain('email-drafting');
    expect(entries.find((m) => m![1] === 'email-drafting')![2]).toBe(SMALL_SET['email-drafting']);
    const count = SMALL_TOTAL - mdListed.length;
    expect(last).toBe(
      `(${count} more skills are not listed here: find them with the skills_search tool when no listed skill ` +
        `fits the task.)`,
    );
    expect(countTokens(markdown.text)).toBeLessThanOrEqual(BUDGET);
  });

  it('each format stays parseable when nothing is listed', async () => {
    const query = { query: 'qqzzxx' };
    expect(
      JSON.parse(
        (
          await http()
            .get('/v1/skills-catalogue')
            .query({ ...query, format: 'json' })
            .expect(200)
        ).text,
      ),
    ).toEqual({
      available_skills: [],
      unlisted_skills: { count: SMALL_TOTAL, note: expect.any(String) },
    });
    const root = parseXml(
      (
        await http()
          .get('/v1/skills-catalogue')
          .query({ ...query, format: 'xml' })
          .expect(200)
      ).text,
    );
    expect(root.children.map((c) => [c.name, c.attributes.count])).toEqual([['unlisted_skills', String(SMALL_TOTAL)]]);
    expect(
      (
        await http()
          .get('/v1/skills-catalogue')
          .query({ ...query, format: 'markdown' })
          .expect(200)
      ).text,
    ).toBe(
      `(${SMALL_TOTAL} more skills are not listed here: find them with the skills_search tool when no listed ` +
        `skill fits the task.)`,
    );
  });

  // ----- 4. REST and GraphQL search and catalogue routes -----

  it('GET /v1/skills/search ranks best first and respects limit', async () => {
    const { results } = (
      await http().get('/v1/skills/search').query({ q: 'extract the tables from this PDF' }).expect(200)
    ).body;
    expect(results[0]).toEqual({ name: 'pdf-tables', description: SMALL_SET['pdf-tables'], score: expect.any(Number) });
    expect(results.length).toBeLessThanOrEqual(10);
    for (const r of results) expect(r.score).toBeGreaterThan(0);
    const limited = (
      await http()
        .get('/v1/skills/search')
        .query({ q: 'write tests, queries, migrations, commit messages and emails', limit: 3 })
        .expect(200)
    ).body.results;
    expect(limited).toHaveLength(3);
    const wide = (
      await http()
        .get('/v1/skills/search')
        .query({ q: 'write tests, queries, migrations, commit messages and emails', limit: 20 })
        .expect(200)
    ).body.results;
    expect(wide.length).toBeGreaterThan(3);
    expect(wide.length).toBeLessThanOrEqual(20);
    expect(wide.slice(0, 3)).toEqual(limited);
    expect((await http().get('/v1/skills/search').query({ q: 'qqzzxx' }).expect(200)).body).toEqual({ results: [] });
  });

  it('GET /v1/skills/search scores never increase down the list', async () => {
    for (const q of MESSAGES) {
      const { results } = (await http().get('/v1/skills/search').query({ q, limit: 20 }).expect(200)).body as {
        results: { name: string; score: number }[];
      };
      expectNonIncreasing(q, results);
    }
  });

  it.each([
    ['no q', {}],
    ['a blank q', { q: '   ' }],
    ['an empty q', { q: '' }],
    ['limit 0', { q: 'pdf', limit: '0' }],
    ['limit 21', { q: 'pdf', limit: '21' }],
    ['limit -1', { q: 'pdf', limit: '-1' }],
    ['a fractional limit', { q: 'pdf', limit: '2.5' }],
    ['a limit that is not a number', { q: 'pdf', limit: 'ten' }],
    ['q over 2000 characters', { q: 'x'.repeat(2001) }],
  ])('GET /v1/skills/search with %s is 400 VALIDATION_FAILED', async (_, query) => {
    const body = (await http().get('/v1/skills/search').query(query).expect(400)).body;
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', details: { problems: [expect.any(String)] } });
  });

  it('GET /v1/skills/search accepts the bounds: limit 1 and 20, q of exactly 2000 characters', async () => {
    expect((await http().get('/v1/skills/search').query({ q: 'pdf', limit: 1 }).expect(200)).body.results).toHaveLength(
      1,
    );
    await http().get('/v1/skills/search').query({ q: 'pdf', limit: 20 }).expect(200);
    await http()
      .get('/v1/skills/search')
      .query({ q: `pdf ${'x'.repeat(1996)}` })
      .expect(200);
  });

  it('GraphQL searchSkills answers what GET /v1/skills/search answers, with the same checks', async () => {
    for (const [q, limit] of [
      ['extract the tables from this PDF', undefined],
      ['write tests, queries, migrations, commit messages and emails', 4],
    ] as const) {
      const { data, errors } = await graphql(
        'query($q: String!, $limit: Int) { searchSkills(query: $q, limit: $limit) { name description score } }',
        { q, limit },
      );
      expect(errors).toBeUndefined();
      const rest = (
        await http()
          .get('/v1/skills/search')
          .query(limit === undefined ? { q } : { q, limit })
          .expect(200)
      ).body.results;
      expect(data.searchSkills).toEqual(rest);
    }
    for (const [query, limit] of [
      ['   ', undefined],
      ['pdf', 0],
      ['pdf', 21],
      ['x'.repeat(2001), undefined],
    ] as const) {
      const { errors } = await graphql(
        'query($q: String!, $limit: Int) { searchSkills(query: $q, limit: $limit) { name } }',
        { q: query, limit },
      );
      expect(errors).toEqual([
        expect.objectContaining({
          path: ['searchSkills'],
          extensions: expect.objectContaining({ code: 'VALIDATION_FAILED', status: 400 }),
        }),
      ]);
    }
  });

  it('GraphQL catalogue(format, query) is the REST catalogue, in every format', async () => {
    const query = 'set up a CI pipeline with GitHub Actions';
    const { data, errors } = await graphql(
      'query($q: String) { all: catalogue, json: catalogue(format: "json", query: $q), xml: catalogue(format: ' +
        '"xml", query: $q), markdown: catalogue(format: "markdown", query: $q) }',
      { q: query },
    );
    expect(errors).toBeUndefined();
    expect(data.all).toBe((await http().get('/v1/skills-catalogue').expect(200)).text);
    for (const format of ['json', 'xml', 'markdown'] as const) {
      expect(data[format]).toBe((await http().get('/v1/skills-catalogue').query({ query, format }).expect(200)).text);
    }
    expect(jsonCatalogue(data.json).unlisted_skills?.count).toBeGreaterThan(0);
  });

  it('GraphQL chatContext(id, message) is the REST context', async () => {
    const chat = await newChat();
    await activate(chat, 'git-commit');
    const message = 'set up a CI pipeline with GitHub Actions';
    const { data, errors } = await graphql(
      'query($id: ID!, $m: String) { chatContext(id: $id, message: $m) { systemPrompt catalogue { complete ' +
        'listed unlisted tokens budgetTokens maxSkills } tools { wireName } } }',
      { id: chat, m: message },
    );
    expect(errors).toBeUndefined();
    const rest = await contextOf(chat, message);
    expect(data.chatContext.systemPrompt).toBe(rest.systemPrompt);
    expect(data.chatContext.catalogue).toEqual(rest.catalogue);
    expect(data.chatContext.catalogue).toMatchObject({ complete: false, budgetTokens: BUDGET, maxSkills: 50 });
    expect(data.chatContext.catalogue.listed[0]).toBe('git-commit');
    expect(data.chatContext.tools.map((t: { wireName: string }) => t.wireName)).toContain('skills_search');
  });

  it("a chat's skill filter narrows its catalogue and what skills_search finds in it", async () => {
    const chat = await newChat();
    await http()
      .put(`/v1/chats/${chat}/skills`)
      .send({ exclude: ['pdf-*'] })
      .expect(200);
    const context = await contextOf(chat, 'extract the tables from this PDF');
    expect(context.catalogue.listed).not.toContain('pdf-tables');
    expect(context.catalogue.listed).not.toContain('pdf-forms');
    expect(context.catalogue.unlisted).toBe(SMALL_TOTAL - 2 - context.catalogue.listed.length);

    ctx.model.play(call('skills_search', { query: 'extract tables from a PDF' }), { text: 'ok' });
    await http().post(`/v1/chats/${chat}/messages`).send({ content: 'extract the tables from this PDF' }).expect(201);
    const output = toolResults(ctx.model.requests[1])[0];
    const found = output.startsWith('{') ? (JSON.parse(output).results as { name: string }[]).map((r) => r.name) : [];
    expect(found).not.toContain('pdf-tables');
    expect(found).not.toContain('pdf-forms');
    // Outside the chat, the user's search still finds it.
    expect(
      (await http().get('/v1/skills/search').query({ q: 'extract tables from a PDF' }).expect(200)).body.results[0]
        .name,
    ).toBe('pdf-tables');
  });
});

describe('catalogue_max_skills caps the count', () => {
  const tree = useSkillTree(writeSmallSet);
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')], { 'app.skills.catalogue_max_skills': 3 });
  });
  afterAll(async () => ctx?.close());

  it('the skills fit the token budget but not the count: at most 3 listed, and pinned skills go past it', async () => {
    expect(countTokens((await http().get('/v1/skills-catalogue').expect(200)).text)).toBeLessThan(4000);
    const chat = (await http().post('/v1/chats').send({}).expect(201)).body.id;
    const message = 'write SQL queries and postgres migrations, then test the python code and review the pull request';
    let context = (await http().get(`/v1/chats/${chat}/context`).query({ message }).expect(200)).body;
    expect(context.catalogue).toMatchObject({
      complete: false,
      unlisted: SMALL_TOTAL - 3,
      budgetTokens: 4000,
      maxSkills: 3,
    });
    expect(context.catalogue.listed).toHaveLength(3);
    expect(jsonCatalogue(catalogueOf(context.systemPrompt)).unlisted_skills?.count).toBe(SMALL_TOTAL - 3);
    expect(context.tools.map((t: { wireName: string }) => t.wireName)).toContain('skills_search');

    ctx.model.play({ text: 'ok' });
    await http().post(`/v1/chats/${chat}/messages`).send({ content: message }).expect(201);
    expect(listedNames(catalogueOf(promptOf(ctx.model.requests[0])))).toEqual(context.catalogue.listed);

    const pinned = ['weather-report', 'image-resize', 'slack-notify', 'changelog'];
    for (const name of pinned) await http().post(`/v1/chats/${chat}/tools/skills.activate`).send({ name }).expect(200);
    context = (await http().get(`/v1/chats/${chat}/context`).query({ message }).expect(200)).body;
    expect([...context.catalogue.listed].sort()).toEqual([...pinned].sort());
    expect(context.catalogue.unlisted).toBe(SMALL_TOTAL - 4);
  });
});
