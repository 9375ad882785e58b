import { Marked, type Tokens } from '../vendor/marked.js';
import DOMPurify from '../vendor/purify.js';
import { copyButton, h } from './dom.js';

/**
 * The assistant's answers as Markdown (GitHub's dialect, a line break where the model put one),
 * made safe twice over: raw HTML in the answer is shown as text, never parsed (a model repeats
 * whatever a web page or a file told it), and what marked writes then passes DOMPurify with an
 * allow-list of the elements Markdown makes. Links open in a new tab without the page's window or
 * address (rel="noopener noreferrer"), and only http(s), mailto and relative links keep their target.
 * Images become links: a model's image could call any address on the reader's behalf.
 */
const ALLOWED_TAGS = [
  'a',
  'p',
  'br',
  'hr',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'blockquote',
  'pre',
  'code',
  'em',
  'strong',
  'del',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
];
const ALLOWED_ATTR = ['href', 'title', 'align', 'start', 'class'];
/**
 * DOMPurify checks every attribute value that is not known to be harmless with this (`align`,
 * `start` too): a scheme must be http(s) or mailto; values without a scheme pass (DOMPurify's own
 * pattern, less its other schemes).
 */
const SAFE_URL = /^(?:(?:https?|mailto):|[^a-z]|[a-z+.-]+(?:[^a-z+.\-:]|$))/i;
const LANGUAGE_CLASS = /^language-[\w+#.-]{1,40}$/;
/** The conversation's title is an h2: an answer's headings start below it. */
const FIRST_HEADING = 3;

/** Heading depths of the answer being rendered, to the levels they get (see headingLevels). */
let headingLevel = new Map<number, number>();

const markdown = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html: ({ text, block }: Tokens.HTML | Tokens.Tag) =>
      block === true ? `<p>${escapeHtml(text.trim())}</p>\n` : escapeHtml(text),
    image: ({ href, text }: Tokens.Image) =>
      `<a href="${escapeHtml(href)}">${escapeHtml(`image: ${text || href}`)}</a>`,
    heading({ tokens, depth }: Tokens.Heading) {
      const level = headingLevel.get(depth) ?? 6;
      return `<h${level}>${this.parser.parseInline(tokens)}</h${level}>\n`;
    },
  },
});

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node instanceof HTMLAnchorElement) {
    if (node.hasAttribute('href')) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer');
    } else node.setAttribute('title', 'Link removed: only http, https, mailto and relative links are kept');
  }
  const language = node.getAttribute('class');
  if (language !== null && !(node instanceof HTMLElement && node.tagName === 'CODE' && LANGUAGE_CLASS.test(language)))
    node.removeAttribute('class');
});

/** `text` (Markdown) as elements to show: sanitised, code blocks with a Copy button, tables that scroll sideways. */
export function renderMarkdown(text: string): DocumentFragment {
  const tokens = markdown.lexer(text);
  headingLevel = headingLevels(tokens);
  const html = markdown.parser(tokens).trim();
  const fragment = DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOWED_URI_REGEXP: SAFE_URL,
    RETURN_DOM_FRAGMENT: true,
  });
  for (const pre of fragment.querySelectorAll('pre')) decorateCode(pre);
  for (const table of fragment.querySelectorAll('table')) {
    const scroll = h('div', { class: 'table-scroll', tabindex: '0', role: 'group', 'aria-label': 'Table' });
    table.replaceWith(scroll);
    scroll.append(table);
  }
  return fragment;
}

/**
 * The levels the answer's headings get: its distinct depths in order, from FIRST_HEADING on, so an
 * answer that starts at `###` or skips a level still reads as an outline under the conversation.
 */
function headingLevels(tokens: ReturnType<typeof markdown.lexer>): Map<number, number> {
  const depths = new Set<number>();
  // Without async extensions, walkTokens calls back synchronously: nothing here is awaited.
  void markdown.walkTokens(tokens, (token) => {
    if (token.type === 'heading') depths.add((token as Tokens.Heading).depth);
  });
  return new Map([...depths].sort((a, b) => a - b).map((depth, index) => [depth, Math.min(6, FIRST_HEADING + index)]));
}

/** A code block with its language and a Copy button; focusable, so it scrolls from the keyboard. */
function decorateCode(pre: HTMLPreElement): void {
  const code = pre.querySelector('code');
  const language = code?.className.replace(/^language-/, '') ?? '';
  pre.setAttribute('tabindex', '0');
  pre.setAttribute('aria-label', language === '' ? 'Code' : `Code (${language})`);
  const bar = h(
    'div',
    { class: 'code-bar' },
    h('span', { class: 'code-language', text: language || 'code' }),
    copyButton(() => (code?.textContent ?? pre.textContent ?? '').replace(/\n$/, ''), pre, 'Copy the code'),
  );
  const block = h('div', { class: 'code-block' });
  pre.replaceWith(block);
  block.append(bar, pre);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/**
 * An answer that streams in: rendered again as it grows, so the text is always shown as Markdown
 * (raw HTML in it never is HTML, not even for a moment). At most once a frame, and a long answer,
 * whose rendering takes longer, less often (a pause of RENDER_PAUSE times the last rendering's
 * time), so the page stays responsive; `finish` renders the answer as stored (with the server's
 * notices) at once.
 */
export function markdownAnswer(rendered: () => void): {
  element: HTMLElement;
  append(text: string): void;
  finish(stored?: string): void;
} {
  const element = h('div', { class: 'content markdown' });
  let text = '';
  // A rendering is due: first its pause (a timeout), then the next frame.
  let pause: number | undefined;
  let frame: number | undefined;
  let nextAt = 0;
  const render = () => {
    pause = undefined;
    frame = undefined;
    const started = performance.now();
    element.replaceChildren(renderMarkdown(text));
    nextAt = performance.now() + (performance.now() - started) * RENDER_PAUSE;
    rendered();
  };
  return {
    element,
    append(piece) {
      text += piece;
      if (pause !== undefined || frame !== undefined) return;
      pause = window.setTimeout(
        () => {
          pause = undefined;
          frame = requestAnimationFrame(render);
        },
        Math.max(0, nextAt - performance.now()),
      );
    },
    finish(stored) {
      clearTimeout(pause);
      if (frame !== undefined) cancelAnimationFrame(frame);
      if (stored !== undefined) text = stored;
      render();
    },
  };
}

const RENDER_PAUSE = 3;
