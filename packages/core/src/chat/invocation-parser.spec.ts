import { describe, expect, it } from '@jest/globals';
import { type Invocation, parseInvocation } from './invocation-parser.js';

const known = new Set(['git-commit', 'pdf', 'docx', 'xlsx', 'pptx', 'csv', 'review']);
const commands = new Set(['review', 'release']);
const slash = { prefixes: ['/'], isSkill: (name: string) => known.has(name) };
const both = { ...slash, prefixes: ['/', '$'] };
const withCommands = { ...both, isCommand: (name: string) => commands.has(name) };

const skills = (names: string[], text: string): Invocation => ({ skills: names, command: null, text });
const plain = (text: string): Invocation => ({ skills: [], command: null, text });

describe(parseInvocation.name, () => {
  it('strips /name and the following whitespace for a known skill', () => {
    expect(parseInvocation('/git-commit write it', slash)).toEqual(skills(['git-commit'], 'write it'));
    expect(parseInvocation('  /pdf\n\nsummarise this', slash)).toEqual(skills(['pdf'], 'summarise this'));
  });

  it('gives the model a request to use the skills when nothing follows the names', () => {
    expect(parseInvocation('/pdf', slash)).toEqual(skills(['pdf'], 'Use the pdf skill.'));
    expect(parseInvocation('/pdf /docx', slash)).toEqual(skills(['pdf', 'docx'], 'Use the pdf and docx skills.'));
    expect(parseInvocation('$pdf $docx $csv ', both)).toEqual(
      skills(['pdf', 'docx', 'csv'], 'Use the pdf, docx and csv skills.'),
    );
  });

  it('leaves unknown names and mid-message mentions untouched', () => {
    expect(parseInvocation('/etc/hosts is a file', slash)).toEqual(plain('/etc/hosts is a file'));
    expect(parseInvocation('/unknown do it', slash)).toEqual(plain('/unknown do it'));
    expect(parseInvocation('please /pdf this', slash)).toEqual(plain('please /pdf this'));
    expect(parseInvocation('/pdfx', slash)).toEqual(plain('/pdfx'));
  });

  it('needs whitespace or the end after the name', () => {
    expect(parseInvocation('/pdf: go', slash)).toEqual(plain('/pdf: go'));
    expect(parseInvocation('/pdf /docx: go', slash)).toEqual(skills(['pdf'], '/docx: go'));
  });

  it('accepts $name only when "$" is a configured prefix', () => {
    expect(parseInvocation('$pdf go', slash)).toEqual(plain('$pdf go'));
    expect(parseInvocation('$pdf go', both)).toEqual(skills(['pdf'], 'go'));
  });

  it('invokes several skills in order, mixing prefixes, and stops at the first word that is not one', () => {
    expect(parseInvocation('$pdf $docx merge these', both)).toEqual(skills(['pdf', 'docx'], 'merge these'));
    expect(parseInvocation('/xlsx $pdf /unknown $docx go', both)).toEqual(skills(['xlsx', 'pdf'], '/unknown $docx go'));
    expect(parseInvocation('$pdf and $docx', both)).toEqual(skills(['pdf'], 'and $docx'));
  });

  it('invokes at most five skills; a sixth stays text', () => {
    expect(parseInvocation('/pdf /docx /xlsx /pptx /csv /git-commit go', slash)).toEqual(
      skills(['pdf', 'docx', 'xlsx', 'pptx', 'csv'], '/git-commit go'),
    );
  });

  it('invokes a skill named twice once, but counts every name towards the five', () => {
    expect(parseInvocation('/pdf $pdf go', both)).toEqual(skills(['pdf'], 'go'));
    expect(parseInvocation('/pdf /pdf /pdf /pdf /pdf /docx go', slash)).toEqual(skills(['pdf'], '/docx go'));
    // Five names at most are looked at, however long the run of them.
    expect(parseInvocation('/pdf '.repeat(30_000), slash)).toEqual(skills(['pdf'], `${'/pdf '.repeat(29_995)}`.trim()));
  });

  it('runs a command with everything after it as its arguments', () => {
    expect(parseInvocation('/release  v1.2 --dry-run \n', withCommands)).toEqual({
      skills: [],
      command: { name: 'release', arguments: 'v1.2 --dry-run' },
      text: 'v1.2 --dry-run',
    });
    expect(parseInvocation('/release', withCommands)).toEqual({
      skills: [],
      command: { name: 'release', arguments: '' },
      text: '',
    });
  });

  it('lets a command win /name over a skill of that name; $name still reaches the skill', () => {
    expect(parseInvocation('/review 42', withCommands).command).toEqual({ name: 'review', arguments: '42' });
    expect(parseInvocation('$review 42', withCommands)).toEqual(skills(['review'], '42'));
  });

  it('runs a command only at the start and only with "/"', () => {
    expect(parseInvocation('$release v1', withCommands)).toEqual(plain('$release v1'));
    expect(parseInvocation('/pdf /release v1', withCommands)).toEqual(skills(['pdf'], '/release v1'));
  });
});
