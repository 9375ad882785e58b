/**
 * A chat's title taken from its first user message, so every client (REST, GraphQL, the web page)
 * lists chats by what they are about rather than by a date. One line, whitespace collapsed,
 * invisible direction controls removed (they could make a title read as something else), at most
 * CHAT_TITLE_MAX_CHARACTERS user-perceived characters, cut at a word boundary with "…". An
 * invocation (`/pdf fill the form`) stays as typed: it is what the user sees in the message, and
 * the skill's name says what the chat is for.
 */
export const CHAT_TITLE_MAX_CHARACTERS = 60;

/** What REST's and GraphQL's descriptions say of a chat's title. */
export const CHAT_TITLE_DESCRIPTION =
  `The title given when the chat was created; otherwise, from the first stored message with words in it: that ` +
  `message on one line, white space collapsed, at most ${CHAT_TITLE_MAX_CHARACTERS} characters (cut at a word, ` +
  `with "…"). Null until then.`;
/** What REST's and GraphQL's descriptions say of the title a chat is created with. */
export const NEW_CHAT_TITLE_DESCRIPTION =
  'Up to 200 characters. Without one (or with white space only), the chat is titled from its first message.';

const ELLIPSIS = '…';
/** Bidi embeddings, overrides, isolates and marks: invisible, and able to reorder what a title shows. */
const DIRECTION_CONTROLS = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
/** Control characters (newlines and tabs among them) become spaces, then runs of white space one. */
const CONTROLS = /\p{Cc}/gu;
const WHITE_SPACE = /\s+/gu;
/** A cut at a word boundary may give up at most this share of the room; past it, a long word is cut. */
const MIN_KEPT_SHARE = 0.5;
/** Punctuation that reads badly right before the ellipsis. */
const TRAILING_PUNCTUATION = /[\s,;:.\-–—]+$/u;

/** Far more of a message than a title can show, so a long one is not scanned whole on every turn. */
const SCANNED_CODE_UNITS = 4096;

/** The title a chat gets from `message`, or null when the message has nothing to show (white space only). */
export function chatTitleFrom(message: string): string | null {
  const line = titleSource(message)
    .replace(DIRECTION_CONTROLS, '')
    .replace(CONTROLS, ' ')
    .replace(WHITE_SPACE, ' ')
    .trim();
  if (line === '') return null;
  // No more code units than the room holds: no more user-perceived characters either, so nothing to segment.
  if (line.length <= CHAT_TITLE_MAX_CHARACTERS) return line;
  const characters = firstGraphemes(line, CHAT_TITLE_MAX_CHARACTERS + 1);
  if (characters.length <= CHAT_TITLE_MAX_CHARACTERS) return line;
  // Room for the ellipsis; a space just past the room still ends a whole word.
  const room = CHAT_TITLE_MAX_CHARACTERS - 1;
  const lastSpace = characters.slice(0, room + 1).lastIndexOf(' ');
  const kept = lastSpace >= room * MIN_KEPT_SHARE ? characters.slice(0, lastSpace) : characters.slice(0, room);
  const text = kept.join('');
  return `${text.replace(TRAILING_PUNCTUATION, '') || text}${ELLIPSIS}`;
}

/** The start of `message` after its leading white space, never ending in half a surrogate pair. */
function titleSource(message: string): string {
  const text = message.trimStart();
  if (text.length <= SCANNED_CODE_UNITS) return text;
  const end = /[\ud800-\udbff]/.test(text[SCANNED_CODE_UNITS - 1]) ? SCANNED_CODE_UNITS - 1 : SCANNED_CODE_UNITS;
  return text.slice(0, end);
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The first `count` user-perceived characters: an emoji with its modifiers or a letter with its
 * accents is one, and is never cut apart. Read lazily: segmenting a whole 100,000-character message
 * takes V8 seconds.
 */
function firstGraphemes(text: string, count: number): string[] {
  const characters: string[] = [];
  for (const { segment } of segmenter.segment(text)) {
    characters.push(segment);
    if (characters.length === count) break;
  }
  return characters;
}
