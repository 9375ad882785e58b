import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import * as claudeCode from '../agents/clients/claude-code.js';
import * as codex from '../agents/clients/codex.js';
import * as geminiCli from '../agents/clients/gemini-cli.js';
import * as opencode from '../agents/clients/opencode.js';

/**
 * The README's entry for each agent is the text the real-agent suite (`npm run test:agents`) runs
 * with that agent's CLI: each driver holds it as README_SNIPPET. This keeps the two the same in
 * `npm test`, where the CLIs themselves are not installed.
 */
const DRIVERS: Record<string, { README_SNIPPET: string }> = {
  'Claude Code': claudeCode,
  Codex: codex,
  'Gemini CLI': geminiCli,
  OpenCode: opencode,
};

describe("the README's agent entries", () => {
  const readme = readFileSync('README.md', 'utf8');

  it.each(Object.entries(DRIVERS))(
    'holds the %s entry exactly as the real-agent suite runs it, as a block of its own',
    (_agent, driver) => {
      expect(readme).toContain(`\n${driver.README_SNIPPET.trimEnd()}\n\`\`\`\n`);
    },
  );
});
