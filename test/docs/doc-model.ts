import type { RecordedRequest, ScriptStep } from '../support/scripted-model-server.js';

const VALIDATION_SKILL = 'skills-system-validation';
/**
 * What the bundled conformance skill asks the model to read, in its order (step 5 reads the script: no sandbox here).
 */
const VALIDATION_READS = ['references/REFERENCE.md', 'assets/fixture.json', '../../config.toml', 'scripts/echo.sh'];

/**
 * The model of the docs' examples: it does what a model that follows the bundled
 * `skills-system-validation` skill does (the README's tour), and answers anything else with one
 * short sentence. It decides from the request alone, so any number of chats and turns can use it.
 */
export function answerAsTheDocsShow(request: RecordedRequest): ScriptStep {
  const messages = request.body.messages;
  const lastUser = messages.map((m) => m.role).lastIndexOf('user');
  const results = messages.slice(lastUser + 1).filter((m) => m.role === 'tool');
  const tools = (request.body.tools ?? []).map((tool) => tool.function.name);
  const activated = results.length > 0 && textOf(results[0].content).includes('# Skills system validation');
  if (!activated || !tools.includes('skills_readResource')) return { text: 'Hello! Ask me to use one of the skills.' };
  const done = results.length - 1;
  if (done < VALIDATION_READS.length)
    return {
      toolCalls: [{ name: 'skills_readResource', arguments: { name: VALIDATION_SKILL, path: VALIDATION_READS[done] } }],
    };
  return { text: reportOf(results.slice(1).map((result) => textOf(result.content))) };
}

function reportOf([reference, fixture, escaping, script]: string[]): string {
  const marker = /MARKER: ([\w-]+)/.exec(reference)?.[1];
  const asset = /marker\\?":\s*\\?"([\w-]+)/.exec(fixture)?.[1];
  const steps = [
    'STEP 1: PASS — instructions received',
    marker ? `STEP 2: PASS — ${marker}` : 'STEP 2: FAIL — no marker',
    asset ? `STEP 3: PASS — ${asset}` : 'STEP 3: FAIL — no marker',
    escaping.includes('leaves the skill folder')
      ? 'STEP 4: PASS — the path was refused'
      : 'STEP 4: FAIL — the path was read',
    script.includes('SCRIPT-MARKER')
      ? 'STEP 5: PASS — the script holds SCRIPT-MARKER'
      : 'STEP 5: FAIL — no SCRIPT-MARKER',
  ];
  return [...steps, `RESULT: ${steps.filter((step) => step.includes('PASS')).length}/5 passed`].join('\n');
}

function textOf(content: unknown): string {
  return typeof content === 'string' ? content : JSON.stringify(content);
}
