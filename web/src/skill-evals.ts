import { api, ApiFailure } from './api.js';
import { h, when } from './dom.js';

/**
 * A skill's trigger evals in its dialog, for admins and the editors who own it (docs/trigger-evals.md): precision and
 * recall per version, level and model with their history (GET …/evals), the cases (the file's read-only, the kept ones
 * deletable), a form to add one, and buttons to run the catalogue and the model level. Every text from the server is
 * set as text, never as markup.
 */

interface EvalCase {
  source: 'file' | 'kept';
  id?: string;
  query: string;
  shouldTrigger: boolean;
  expectSkill?: string;
  addedBy?: { id: string | null; name: string | null } | null;
  addedAt?: string;
  inFile?: boolean;
}

interface CaseList {
  cases: EvalCase[];
  fileProblems: string[];
}

interface Score {
  cases: number;
  passed: number;
  precision: number | null;
  recall: number | null;
}

interface CaseResult {
  query: string;
  shouldTrigger: boolean;
  source?: 'file' | 'kept';
  pass: boolean;
}

interface StoredRun {
  digest: string;
  level: 'catalogue' | 'model';
  model: string;
  score: Score;
  runAt: string;
}

interface CatalogueRun {
  skills: { score: Score; cases: CaseResult[] }[];
  withoutEvals: string[];
  invalid: { problems: string[] }[];
}

interface ModelRun {
  model: string;
  notRun: number;
  score: Score;
  cases: CaseResult[];
}

/**
 * The evals section of skill `name`, or null for whom it is not (a member; an editor who does not own the skill, whom
 * the server refuses). `model` is the model the page has chosen, for the model level.
 */
export async function skillEvalsSection(
  name: string,
  role: string | undefined,
  model: () => string,
): Promise<HTMLElement | null> {
  if (role !== 'admin' && role !== 'editor') return null;
  const base = `/v1/admin/skills/${encodeURIComponent(name)}/evals`;
  const load = () =>
    Promise.all([api<CaseList>('GET', `${base}/cases`), api<{ runs: StoredRun[] }>('GET', base)] as const);
  let loaded: Awaited<ReturnType<typeof load>>;
  try {
    loaded = await load();
  } catch (error) {
    if (error instanceof ApiFailure && error.error.status === 403) return null;
    throw error;
  }
  const history = h('div', { class: 'evals-history' });
  const cases = h('ul', { class: 'eval-cases', 'aria-label': `Trigger eval cases of ${name}` });
  const status = h('p', { class: 'evals-status', role: 'status' });
  const problem = h('p', { class: 'error', role: 'alert' });
  const showProblem = (error: unknown) => {
    problem.textContent = error instanceof ApiFailure ? `${error.error.code}: ${error.error.message}` : String(error);
  };
  const render = ([list, runs]: typeof loaded) => {
    history.replaceChildren(historyTable(runs.runs));
    cases.replaceChildren(...caseItems(list, (id) => act(() => api('DELETE', `${base}/cases/${id}`))));
  };
  /** An action, its failure said in the section; the lists are read again after it either way. True: it worked. */
  const act = async (action: () => Promise<unknown>, after?: (answer: unknown) => void): Promise<boolean> => {
    problem.textContent = '';
    let done = false;
    try {
      // Not `after?.(await action())`: without `after`, that would not run the action at all.
      const answer = await action();
      after?.(answer);
      done = true;
    } catch (error) {
      showProblem(error);
    }
    await load().then(render, showProblem);
    return done;
  };
  const runButton = (label: string, body: () => object, said: (answer: unknown) => string) => {
    const button = h('button', { type: 'button', text: label });
    button.addEventListener('click', () => {
      button.disabled = true;
      status.textContent = `${label}…`;
      void act(
        () => api('POST', `${base}/run`, body()),
        (answer) => (status.textContent = said(answer)),
      ).finally(() => {
        button.disabled = false;
        if (status.textContent === `${label}…`) status.textContent = '';
      });
    });
    return button;
  };
  render(loaded);
  return h(
    'section',
    { class: 'evals', 'aria-label': 'Trigger evals' },
    h('h4', { text: 'Trigger evals' }),
    h(
      'div',
      { class: 'evals-actions' },
      runButton('Run catalogue level', () => ({}), catalogueSummary),
      runButton(
        'Run model level',
        () => ({ level: 'model', ...(model() === '' ? {} : { model: model() }) }),
        modelSummary,
      ),
    ),
    status,
    h('h5', { text: 'Results' }),
    history,
    h('h5', { text: 'Cases' }),
    cases,
    addForm((body) => act(() => api('POST', `${base}/cases`, body))),
    problem,
  );
}

/** Each kept run, newest first: version, level, model, precision, recall, cases passed, when. */
function historyTable(runs: StoredRun[]): HTMLElement {
  if (runs.length === 0) return h('p', { class: 'empty', text: 'No run yet.' });
  const cell = (text: string) => h('td', { text });
  return h(
    'table',
    { class: 'evals-runs', 'aria-label': 'Eval results' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ...['Version', 'Level', 'Model', 'Precision', 'Recall', 'Passed', 'Run'].map((name) => h('th', { text: name })),
      ),
    ),
    h(
      'tbody',
      {},
      ...runs.map((run) =>
        h(
          'tr',
          { 'data-level': run.level },
          h('td', {}, h('code', { title: run.digest, text: run.digest.replace(/^sha256:/, '').slice(0, 12) })),
          cell(run.level),
          cell(run.model === '' ? '—' : run.model),
          cell(percent(run.score.precision)),
          cell(percent(run.score.recall)),
          cell(`${run.score.passed}/${run.score.cases}`),
          cell(when(run.runAt)),
        ),
      ),
    ),
  );
}

/** The cases: the file's (read-only), then the kept ones, each with its Delete button. */
function caseItems(list: CaseList, remove: (id: string) => Promise<boolean>): HTMLElement[] {
  const problems = list.fileProblems.map((text) =>
    h('li', { class: 'error', text: `evals/triggers.json is not valid: ${text}` }),
  );
  if (list.cases.length === 0) return [...problems, h('li', { class: 'empty', text: 'No case yet.' })];
  return [
    ...problems,
    ...list.cases.map((entry) => {
      const expectation = entry.shouldTrigger
        ? 'should lead here'
        : `should not lead here${entry.expectSkill === undefined ? '' : ` (but to ${entry.expectSkill})`}`;
      const origin = entry.source === 'file' ? 'from evals/triggers.json' : keptOrigin(entry);
      const item = h(
        'li',
        { class: `eval-case eval-case-${entry.source}`, 'data-source': entry.source },
        h('span', { class: 'eval-query', text: entry.query }),
        h('span', { class: 'eval-expect', text: ` — ${expectation}` }),
        h('small', { class: 'eval-origin', text: ` · ${origin}` }),
      );
      if (entry.source === 'kept' && entry.id !== undefined) {
        const id = entry.id;
        const button = h('button', {
          type: 'button',
          class: 'eval-delete',
          'aria-label': `Delete case: ${entry.query}`,
          text: 'Delete',
        });
        button.addEventListener('click', () => {
          button.disabled = true;
          void remove(id);
        });
        item.append(' ', button);
      }
      return item;
    }),
  ];
}

/** Who added a kept case and when, and whether the file now lists its request (then the file's case runs). */
function keptOrigin(entry: EvalCase): string {
  const at = entry.addedAt === undefined ? '' : `, ${when(entry.addedAt)}`;
  const inFile = entry.inFile ? ' (the file lists it too: the file’s case runs)' : '';
  return `added by ${entry.addedBy?.name ?? 'the server'}${at}${inFile}`;
}

/** The form that adds one case (the API takes several too: docs/trigger-evals.md). */
function addForm(add: (body: object) => Promise<boolean>): HTMLFormElement {
  const query = h('textarea', { name: 'query', rows: '2', maxlength: '4000', required: true });
  const expectation = h(
    'select',
    { name: 'expectation' },
    h('option', { value: 'true', text: 'should lead to this skill' }),
    h('option', { value: 'false', text: 'should not lead to this skill' }),
  );
  const expectSkill = h('input', { name: 'expect_skill', autocomplete: 'off', maxlength: '64' });
  const form = h(
    'form',
    { class: 'eval-add', 'aria-label': 'Add a case' },
    h('label', { text: 'Request' }, query),
    h('label', { text: 'Expectation' }, expectation),
    h('label', { text: 'Skill expected instead (optional, when it should not lead here)' }, expectSkill),
    h('button', { type: 'submit', text: 'Add case' }),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const body = {
      query: query.value,
      should_trigger: expectation.value === 'true',
      ...(expectSkill.value.trim() === '' ? {} : { expect_skill: expectSkill.value.trim() }),
    };
    // Cleared once kept; a refused case stays in the form, to be corrected.
    void add(body).then((kept) => kept && form.reset());
  });
  return form;
}

function catalogueSummary(answer: unknown): string {
  const run = answer as CatalogueRun;
  const [skill] = run.skills;
  if (skill === undefined)
    return run.invalid.length > 0
      ? `Not run: evals/triggers.json is not valid (${run.invalid[0].problems.join('; ')}).`
      : 'Not run: this skill has no case yet.';
  return `Catalogue level: ${summary(skill.score)}${failures(skill.cases)}`;
}

function modelSummary(answer: unknown): string {
  const run = answer as ModelRun;
  const left = run.notRun > 0 ? ` (${run.notRun} case(s) not run: the call budget ran out)` : '';
  return `Model level (${run.model}): ${summary(run.score)}${left}${failures(run.cases)}`;
}

function summary(score: Score): string {
  const { passed, cases, precision, recall } = score;
  return `${passed}/${cases} passed, precision ${percent(precision)}, recall ${percent(recall)}.`;
}

function failures(cases: CaseResult[]): string {
  const failed = cases
    .filter((entry) => !entry.pass)
    .map((entry) => `${JSON.stringify(entry.query)}${entry.source === 'kept' ? ' (kept)' : ''}`);
  return failed.length === 0 ? '' : ` Failed: ${failed.join(', ')}.`;
}

function percent(ratio: number | null): string {
  return ratio === null ? '—' : `${Math.round(ratio * 100)}%`;
}
