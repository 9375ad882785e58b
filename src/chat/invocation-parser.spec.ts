import { describe, expect, it } from '@jest/globals';
import { parseInvocation } from './invocation-parser.js';

const known = new Set(['git-commit', 'pdf']);
const isSkill = (name: string) => known.has(name);

describe(parseInvocation.name, () => {
  it('strips /name and the following whitespace for a known skill', () => {
    expect(parseInvocation('/git-commit write it', ['/'], isSkill)).toEqual({ skill: 'git-commit', text: 'write it' });
    expect(parseInvocation('  /pdf\n\nsummarise this', ['/'], isSkill)).toEqual({ skill: 'pdf', text: 'summarise this' });
  });

  it('gives the model a request to use the skill when nothing follows the name', () => {
    expect(parseInvocation('/pdf', ['/'], isSkill)).toEqual({ skill: 'pdf', text: 'Use the pdf skill.' });
  });

  it('leaves unknown names and mid-message mentions untouched', () => {
    expect(parseInvocation('/etc/hosts is a file', ['/'], isSkill)).toEqual({ skill: null, text: '/etc/hosts is a file' });
    expect(parseInvocation('/unknown do it', ['/'], isSkill)).toEqual({ skill: null, text: '/unknown do it' });
    expect(parseInvocation('please /pdf this', ['/'], isSkill)).toEqual({ skill: null, text: 'please /pdf this' });
    expect(parseInvocation('/pdfx', ['/'], isSkill)).toEqual({ skill: null, text: '/pdfx' });
  });

  it('needs whitespace or the end after the name', () => {
    expect(parseInvocation('/pdf: go', ['/'], isSkill)).toEqual({ skill: null, text: '/pdf: go' });
  });

  it('accepts $name only when "$" is a configured prefix', () => {
    expect(parseInvocation('$pdf go', ['/'], isSkill)).toEqual({ skill: null, text: '$pdf go' });
    expect(parseInvocation('$pdf go', ['/', '$'], isSkill)).toEqual({ skill: 'pdf', text: 'go' });
  });
});
