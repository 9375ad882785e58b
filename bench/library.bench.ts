/**
 * Library benchmark: what Skillhost costs inside an app of its own (`skillhost/nest` and
 * `skillhost/ai-sdk`), with 2,000 skills on disk. Measured: importing each entry point in a fresh
 * process, the module's start (its first scan), and what an app's turn adds to its own model
 * loop: the tools (`skillTools`), the system prompt (`skillSystemPrompt`, a ranked catalogue once
 * the skills are over the budget), an explicit `/name` (`invokeSkills`) and one tool call.
 *
 *   npm run bench:library      (writes bench/results/library.{md,json})
 */
import 'reflect-metadata';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import type { ToolSet } from 'ai';
import { invokeSkills, skillSystemPrompt, skillTools } from '../src/ai-sdk.js';
import { SkillRegistryService, SkillResourcesService, SkillsModule } from '../src/nest.js';
import { machineName, percentile, recordResults, type SummaryLine, writeBenchSkills } from './bench-support.js';

const SKILLS = Number(process.env.BENCH_SKILLS ?? 2000);
const TURNS = Number(process.env.BENCH_TURNS ?? 300);
const IMPORTS = Number(process.env.BENCH_IMPORTS ?? 5);
const DIST = join(import.meta.dirname, '..', 'src');

/** Milliseconds of `run`, `count` times: p50, p99, max. */
async function timed(count: number, run: (i: number) => unknown): Promise<{ p50: number; p99: number; max: number }> {
  const samples: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await run(i);
    samples.push(performance.now() - started);
  }
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  return { p50: round(percentile(samples, 50)), p99: round(percentile(samples, 99)), max: round(Math.max(...samples)) };
}

/** A fresh Node process that imports `file` and prints how long the import took. */
function importMs(file: string): number {
  const script =
    `const t = performance.now(); await import(${JSON.stringify(file)}); console.log(performance.now() - t); ` +
    `setImmediate(() => process.exit(0));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim());
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'skillhost-bench-library-'));
  try {
    const skillsDir = join(work, 'skills');
    writeBenchSkills(skillsDir, SKILLS);

    const imports: Record<string, { p50: number; max: number }> = {};
    for (const entry of ['nest', 'ai-sdk', 'index']) {
      const samples = Array.from({ length: IMPORTS }, () => importMs(join(DIST, `${entry}.js`)));
      imports[entry] = { p50: Math.round(percentile(samples, 50)), max: Math.round(Math.max(...samples)) };
    }

    const startedAt = performance.now();
    const app = await NestFactory.createApplicationContext(SkillsModule.forRoot({ directories: [skillsDir] }), {
      logger: false,
    });
    const startMs = Math.round(performance.now() - startedAt);
    try {
      const registry = app.get(SkillRegistryService);
      const resources = app.get(SkillResourcesService);
      if (registry.snapshot.skills.size !== SKILLS)
        throw new Error(`loaded ${registry.snapshot.skills.size} skills, expected ${SKILLS}`);
      const base = { registry, resources, onCard: () => undefined };
      const name = (i: number) => `bench-skill-${String(i % SKILLS).padStart(4, '0')}`;

      const tools = await timed(TURNS, () => skillTools(base));
      const prompt = await timed(TURNS, (i) =>
        skillSystemPrompt({
          ...base,
          basePrompt: 'You are a helpful assistant.',
          message: `help with topic ${i % 97} in area ${i % 13}`,
        }),
      );
      const invoke = await timed(TURNS, (i) => invokeSkills({ ...base, message: `/${name(i)} do it` }));
      const set: ToolSet = skillTools(base);
      const activate = set.skills_activate as { execute: (input: unknown, options: unknown) => Promise<string> };
      const call = await timed(TURNS, (i) =>
        activate.execute({ name: name(i) }, { toolCallId: `c${i}`, messages: [] }),
      );
      const read = set.skills_readResource as { execute: (input: unknown, options: unknown) => Promise<string> };
      const readCall = await timed(TURNS, (i) =>
        read.execute({ name: name(i), path: 'references/guide.md' }, { toolCallId: `r${i}`, messages: [] }),
      );
      const promptBytes = Buffer.byteLength(
        skillSystemPrompt({ ...base, basePrompt: 'You are a helpful assistant.', message: 'help with topic 5' }),
      );

      const result = {
        skills: SKILLS,
        turns: TURNS,
        importMs: imports,
        moduleStartMs: startMs,
        perTurnMs: {
          skillTools: tools,
          skillSystemPrompt: prompt,
          invokeSkills: invoke,
          activateCall: call,
          readResourceCall: readCall,
        },
        promptBytes,
      };
      const row = (what: string, t: { p50: number; p99: number; max: number }) =>
        `| ${what} | ${t.p50} | ${t.p99} | ${t.max} |`;
      const text = [
        '# Library benchmark (`npm run bench:library`)',
        '',
        `${SKILLS} skills on disk (a SKILL.md and a reference each), ${TURNS} turns per row; ${machineName()}.`,
        '',
        '## Import (a fresh process, from dist/)',
        '',
        '| entry | p50 ms | max ms |',
        '|---|---|---|',
        ...Object.entries(imports).map(
          ([entry, t]) => `| \`skillhost${entry === 'index' ? '' : `/${entry}`}\` | ${t.p50} | ${t.max} |`,
        ),
        '',
        `## Start: \`SkillsModule.forRoot\` in an application context, first scan of ${SKILLS} skills: ${startMs} ms`,
        '',
        "## What a turn adds to the app's own model loop",
        '',
        '| step | p50 ms | p99 ms | max ms |',
        '|---|---|---|---|',
        row("`skillTools()` (the style's tools for the current snapshot)", tools),
        row(
          `\`skillSystemPrompt()\` (${SKILLS} skills are over the 4,000-token budget: ranked for the message)`,
          prompt,
        ),
        row('`invokeSkills()` with `/name` (parse, activate, its card and messages)', invoke),
        row('one `skills_activate` call (SKILL.md read, card)', call),
        row('one `skills_readResource` call (a 480-byte reference)', readCall),
        '',
        `The system prompt with the ranked catalogue is ${promptBytes} bytes.`,
        '',
      ].join('\n');
      recordResults('library', result, text, summaryOf(result));
    } finally {
      await app.close();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

type Timing = { p50: number; p99: number; max: number };

/** Each library entry's import against the whole server's, and what a turn adds (nothing to compare it with). */
function summaryOf(r: {
  skills: number;
  importMs: Record<string, { p50: number }>;
  moduleStartMs: number;
  perTurnMs: Record<'skillTools' | 'skillSystemPrompt' | 'activateCall', Timing>;
}): SummaryLine[] {
  const server = { name: 'import `skillhost` (the server)', value: r.importMs.index.p50 };
  return [
    { measure: 'import `skillhost/nest`, p50', value: r.importMs.nest.p50, unit: 'ms', baseline: server },
    { measure: 'import `skillhost/ai-sdk`, p50', value: r.importMs['ai-sdk'].p50, unit: 'ms', baseline: server },
    { measure: `SkillsModule.forRoot start, ${r.skills} skills`, value: r.moduleStartMs, unit: 'ms' },
    { measure: '`skillSystemPrompt()` per turn, p99', value: r.perTurnMs.skillSystemPrompt.p99, unit: 'ms' },
    { measure: '`skillTools()` per turn, p99', value: r.perTurnMs.skillTools.p99, unit: 'ms' },
    { measure: 'one `skills_activate` call, p99', value: r.perTurnMs.activateCall.p99, unit: 'ms' },
  ];
}

await main();
