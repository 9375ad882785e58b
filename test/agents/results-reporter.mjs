// A Jest reporter for the real-agent suite: writes bench/results/agents.md, one table per client
// (its pinned version from clients.json), each test with its result and time, so what each agent
// does with Skillhost is recorded from a run, not from memory. Plain JavaScript: Jest loads
// reporters outside the TypeScript transform. A run of some files only keeps the other clients'
// sections of the previous recording.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, join } from 'node:path';

const RESULTS = join('bench', 'results', 'agents.md');
const SECTION = /^## (.+)$/m;

export default class AgentResultsReporter {
  constructor(globalConfig) {
    this.root = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const clients = JSON.parse(readFileSync(join(this.root, 'test', 'agents', 'clients.json'), 'utf8'));
    const sections = previousSections(join(this.root, RESULTS));
    for (const file of results.testResults) {
      const id = basename(file.testFilePath).replace(/\.agents-spec\.ts$/, '');
      // `codex-gateway` is Codex too, run another way: it takes the version of the client its name starts with.
      const client = clients[id] ?? clients[Object.keys(clients).find((known) => id.startsWith(`${known}-`))];
      const title = client === undefined ? id : `${id}: ${client.package}@${client.version}`;
      const rows = file.testResults.map(
        (test) =>
          `| ${[...test.ancestorTitles.slice(1), test.title].join(' › ').replace(/\|/g, '\\|')} | ` +
          `${mark(test.status)} | ${((test.duration ?? 0) / 1000).toFixed(1)} |`,
      );
      const failure = file.failureMessage
        ? `\n<details><summary>failures</summary>\n\n\`\`\`\n${strip(file.failureMessage).slice(
            0,
            6000,
          )}\n\`\`\`\n</details>\n`
        : '';
      sections.set(
        id,
        `## ${title}\n\nRun ${new Date().toISOString()}: ${file.numPassingTests} passed, ` +
          `${file.numFailingTests} failed, ${file.numPendingTests} skipped.\n\n| test | result | s ` +
          `|\n|---|---|---:|\n${rows.join('\n')}\n${failure}`,
      );
    }
    const body = [...sections.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([, text]) => text.trim())
      .join('\n\n');
    const head =
      `# Real agents against Skillhost\n\nRecorded by \`npm run test:agents\` ` +
      `(test/agents/results-reporter.mjs) on ${cpus().length} ` +
      `× ${cpus()[0]?.model.trim() ?? 'CPU'}, Node ` +
      `${process.version}. Each client runs headless against a fresh Skillhost with API keys and a scripted ` +
      `model server on 127.0.0.1 that speaks its provider's API; what each test checks is in its name. What ` +
      `each client supports is summarised in ` +
      `[docs/mcp-and-agents.md](../../docs/mcp-and-agents.md#what-each-agent-does-with-skillhost).\n`;
    writeFileSync(join(this.root, RESULTS), `${head}\n${body}\n`);
    process.stderr.write(`\nReal-agent results written to ${RESULTS}\n`);
  }
}

function previousSections(path) {
  const sections = new Map();
  if (!existsSync(path)) return sections;
  const parts = readFileSync(path, 'utf8')
    .split(/^(?=## )/m)
    .slice(1);
  for (const part of parts) {
    const title = SECTION.exec(part)?.[1] ?? '';
    sections.set(title.split(':')[0], part);
  }
  return sections;
}

function mark(status) {
  return status === 'passed' ? 'pass' : status === 'failed' ? '**FAIL**' : status;
}

function strip(text) {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes start with ESC
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}
