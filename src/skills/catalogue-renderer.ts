import type { CatalogueFormat } from '../config/app-config.js';
import { compareByName } from './skill-order.js';

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

/** Entries in stable order (by name, code point order); no entries render as the empty string. */
export function renderCatalogue(entries: readonly CatalogueEntry[], format: CatalogueFormat, includeLocation: boolean): string {
  if (entries.length === 0) return '';
  const sorted = [...entries].sort(compareByName);
  switch (format) {
    case 'json':
      return renderJson(sorted, includeLocation);
    case 'xml':
      return renderXml(sorted, includeLocation);
    case 'markdown':
      // With locations, each line is the aloop design's: `- name: description (file: <SKILL.md>)`.
      return sorted
        .map((entry) => `- ${entry.name}: ${oneLine(entry.description)}${includeLocation && entry.location !== undefined ? ` (file: ${oneLine(entry.location)})` : ''}`)
        .join('\n');
  }
}

function renderJson(entries: readonly CatalogueEntry[], includeLocation: boolean): string {
  const available_skills = entries.map((entry) =>
    includeLocation && entry.location !== undefined
      ? { name: entry.name, description: entry.description, location: entry.location }
      : { name: entry.name, description: entry.description },
  );
  return JSON.stringify({ available_skills });
}

function renderXml(entries: readonly CatalogueEntry[], includeLocation: boolean): string {
  const parts = ['<available_skills>'];
  for (const entry of entries) {
    parts.push('<skill>', `<name>${escapeXml(entry.name)}</name>`, `<description>${escapeXml(entry.description)}</description>`);
    if (includeLocation && entry.location !== undefined) parts.push(`<location>${escapeXml(entry.location)}</location>`);
    parts.push('</skill>');
  }
  parts.push('</available_skills>');
  return parts.join('\n');
}

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => XML_ESCAPES[ch]);
}

/** A markdown list item must stay on one line: line breaks inside a description become spaces. */
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}
