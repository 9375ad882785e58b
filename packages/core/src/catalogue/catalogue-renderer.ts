import type { CatalogueFormat } from '../options/skills-options.schema.js';
import { compareByName } from '../skill/skill-order.js';

/**
 * Level 1 of progressive disclosure: the name and description of each enabled skill, rendered for
 * the system prompt. https://agentskills.io/integrate-skills#injecting-into-context
 */
export interface CatalogueEntry {
  name: string;
  description: string;
  /** Absolute SKILL.md path; rendered only when include_location is on. */
  location?: string;
}

/** Skills a partial catalogue leaves out, and what the model can do about them. */
export interface UnlistedSkills {
  count: number;
  /** One sentence: how to find them (the search tool), or that they are not listed. */
  note: string;
}

/** Entries in stable order (by name, code point order); no entries render as the empty string. */
export function renderCatalogue(
  entries: readonly CatalogueEntry[],
  format: CatalogueFormat,
  includeLocation: boolean,
): string {
  if (entries.length === 0) return '';
  return renderListing([...entries].sort(compareByName), format, includeLocation);
}

/**
 * Entries in the order given, each rendered by `renderEntry` and joined as `catalogueFrame` says,
 * so a catalogue's size is the sum of its parts: a budget can be counted per entry.
 */
export function renderListing(
  entries: readonly CatalogueEntry[],
  format: CatalogueFormat,
  includeLocation: boolean,
  unlisted?: UnlistedSkills,
): string {
  const frame = catalogueFrame(format);
  const body = frame.open + entries.map((entry) => renderEntry(entry, format, includeLocation)).join(frame.separator);
  return unlisted === undefined || unlisted.count === 0 ? body + frame.close : body + renderUnlisted(unlisted, format);
}

/** What surrounds and separates the entries in each format. */
export function catalogueFrame(format: CatalogueFormat): { open: string; separator: string; close: string } {
  switch (format) {
    case 'json':
      return { open: '{"available_skills":[', separator: ',', close: ']}' };
    case 'xml':
      return { open: '<available_skills>\n', separator: '\n', close: '\n</available_skills>' };
    case 'markdown':
      return { open: '', separator: '\n', close: '' };
  }
}

/** One skill as the catalogue shows it. */
export function renderEntry(entry: CatalogueEntry, format: CatalogueFormat, includeLocation: boolean): string {
  const location = includeLocation ? entry.location : undefined;
  switch (format) {
    case 'json':
      return JSON.stringify(
        location !== undefined
          ? { name: entry.name, description: entry.description, location }
          : { name: entry.name, description: entry.description },
      );
    case 'xml': {
      const parts = [
        '<skill>',
        `<name>${escapeXml(entry.name)}</name>`,
        `<description>${escapeXml(entry.description)}</description>`,
      ];
      if (location !== undefined) parts.push(`<location>${escapeXml(location)}</location>`);
      parts.push('</skill>');
      return parts.join('\n');
    }
    case 'markdown':
      // With locations, each line is the aloop design's: `- name: description (file: <SKILL.md>)`.
      return (
        `- ${entry.name}: ` +
        `${oneLine(entry.description)}${location !== undefined ? ` (file: ${oneLine(location)})` : ''}`
      );
  }
}

/** What ends a partial catalogue in place of the frame's close: the count of skills left out and the note. */
export function renderUnlisted(unlisted: UnlistedSkills, format: CatalogueFormat): string {
  switch (format) {
    case 'json':
      return `],"unlisted_skills":${JSON.stringify({ count: unlisted.count, note: unlisted.note })}}`;
    case 'xml':
      return (
        `\n<unlisted_skills ` +
        `count="${unlisted.count}">${escapeXml(unlisted.note)}</unlisted_skills>\n</available_skills>`
      );
    case 'markdown':
      return `\n(${unlisted.note})`;
  }
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => XML_ESCAPES[ch]);
}

/** A markdown list item must stay on one line: line breaks inside a description become spaces. */
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}
