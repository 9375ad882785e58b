import { describe, expect, it } from '@jest/globals';
import { MAX_TRIGGER_EVALS_BYTES, parseTriggerEvals } from './trigger-evals.js';

describe(parseTriggerEvals.name, () => {
  it("reads skill-creator's list form, expect_skill on a negative case", () => {
    const text = JSON.stringify([
      { query: 'turn this quarterly report into a slide deck', should_trigger: true },
      { query: '  fix the typo in my essay ', should_trigger: false, expect_skill: 'proofread' },
    ]);
    expect(parseTriggerEvals(text)).toEqual({
      cases: [
        { query: 'turn this quarterly report into a slide deck', shouldTrigger: true },
        { query: 'fix the typo in my essay', shouldTrigger: false, expectSkill: 'proofread' },
      ],
    });
  });

  it('reads the grouped form, a request alone or with the skill expected instead', () => {
    const text = JSON.stringify({
      should_trigger: ['make slides from these notes'],
      should_not_trigger: ['what is the weather', { query: 'edit this spreadsheet', expect_skill: 'xlsx' }],
    });
    expect(parseTriggerEvals(text)).toEqual({
      cases: [
        { query: 'make slides from these notes', shouldTrigger: true },
        { query: 'what is the weather', shouldTrigger: false },
        { query: 'edit this spreadsheet', shouldTrigger: false, expectSkill: 'xlsx' },
      ],
    });
  });

  it('names the file, the case and why for each bad case', () => {
    const text = JSON.stringify([
      { query: 'make slides', should_trigger: true },
      { query: 'make a chart', should_trigger: 'yes' },
      { should_trigger: false },
      { query: '', should_trigger: true },
      { query: 'deck please', should_trigger: true, expected: 'x' },
    ]);
    expect(parseTriggerEvals(text)).toEqual({
      problems: [
        'evals/triggers.json: case 2 ("make a chart"): should_trigger must be true or false',
        'evals/triggers.json: case 3: query is missing',
        'evals/triggers.json: case 4 (""): query must not be empty',
        'evals/triggers.json: case 5 ("deck please"): unknown field(s) "expected" (a case has query, ' +
          'should_trigger, expect_skill)',
      ],
    });
  });

  it('names the side and index of a bad grouped entry', () => {
    const text = JSON.stringify({ should_trigger: ['ok', 3], should_not_trigger: [{ query: 'x', skill: 'y' }] });
    const parsed = parseTriggerEvals(text);
    expect(parsed).toEqual({
      problems: [
        expect.stringMatching(/^evals\/triggers\.json: should_trigger\[1\]: must be a request/),
        expect.stringMatching(/^evals\/triggers\.json: should_not_trigger\[0\] \("x"\): /),
      ],
    });
  });

  it('refuses what is not JSON, the wrong shape, no cases, a request both ways, a positive expect_skill', () => {
    expect(parseTriggerEvals('{ "should_trigger": [')).toEqual({
      problems: [expect.stringMatching(/^evals\/triggers\.json: not JSON \(/)],
    });
    expect(parseTriggerEvals('"slides"')).toEqual({
      problems: [expect.stringContaining('evals/triggers.json: must be a list of { "query", "should_trigger"')],
    });
    expect(parseTriggerEvals('[]')).toEqual({
      problems: ['evals/triggers.json: has no cases; add requests that should and should not lead here'],
    });
    expect(
      parseTriggerEvals(JSON.stringify({ should_trigger: ['Make slides'], should_not_trigger: ['make slides'] })),
    ).toEqual({
      problems: [
        'evals/triggers.json: case 2 ("make slides"): the same request is listed as should_trigger true too; keep one',
      ],
    });
    expect(parseTriggerEvals(JSON.stringify([{ query: 'q', should_trigger: true, expect_skill: 'other' }]))).toEqual({
      problems: [expect.stringContaining('case 1 ("q"): expect_skill names the skill a negative case leads to')],
    });
  });

  it('refuses an expect_skill no skill could have: control characters, slashes, spaces around it', () => {
    // Regression, fixed since a hostile pass found it. Was: read, and `skillhost eval` printed the name as it was
    // (a terminal escape included).
    for (const name of ['\u001b[2Jpdf', '../pdf', 'a\\b', ' pdf', 'pdf ', '\u009bpdf']) {
      const text = JSON.stringify([{ query: 'make a PDF', should_trigger: false, expect_skill: name }]);
      expect(parseTriggerEvals(text)).toEqual({
        problems: [
          'evals/triggers.json: case 1 ("make a PDF"): expect_skill must be a skill name: no control characters, ' +
            'slashes or spaces around it',
        ],
      });
    }
    const fine = JSON.stringify([{ query: 'make a PDF', should_trigger: false, expect_skill: 'Not_Strict.Name' }]);
    expect(parseTriggerEvals(fine)).toEqual({
      cases: [{ query: 'make a PDF', shouldTrigger: false, expectSkill: 'Not_Strict.Name' }],
    });
  });

  it('refuses a file past MAX_TRIGGER_EVALS_BYTES before parsing it', () => {
    const huge = JSON.stringify([{ query: 'x'.repeat(MAX_TRIGGER_EVALS_BYTES), should_trigger: true }]);
    expect(parseTriggerEvals(huge)).toEqual({
      problems: [expect.stringMatching(/^evals\/triggers\.json: larger than 262144 bytes/)],
    });
  });
});
