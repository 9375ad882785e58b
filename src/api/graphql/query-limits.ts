import { type DocumentNode, type FragmentDefinitionNode, Kind, type SelectionSetNode, Source } from 'graphql';
import { AppError, ErrorCode } from '@skillhost/core';

export interface QueryLimits {
  /** Nesting of fields: `{ chats { items { id } } }` is 3 deep. */
  maxDepth: number;
  /** Fields to resolve, counted as written with fragments expanded: every alias and every spread counts. */
  maxCost: number;
}

/**
 * Ten levels hold every query the schema can answer (it has no cycles and is at most six deep) and
 * the standard introspection query (six, as measured here). The cost cap is about four times that
 * introspection query (228 fields), the largest document clients commonly send.
 */
export const QUERY_LIMITS: QueryLimits = { maxDepth: 10, maxCost: 1000 };

export interface QueryMeasure {
  depth: number;
  cost: number;
}

interface Measurer {
  fragments: Map<string, FragmentDefinitionNode>;
  measured: Map<string, QueryMeasure>;
  visiting: Set<string>;
}

/**
 * Depth and cost of a whole document (all its operations), without the schema, so it can run
 * before validation does any work. Each fragment is measured once and its measure reused at every
 * spread, so a document of nested spreads costs time in its size, not in what it expands to. A
 * fragment cycle adds nothing here; the specification's validation refuses it afterwards.
 *
 * `ofType` adds no depth: in introspection it unwraps list and non-null types, a chain bounded by
 * the schema (the standard introspection query nests it seven times). It still adds cost.
 */
export function measureDocument(document: DocumentNode): QueryMeasure {
  const measurer: Measurer = { fragments: new Map(), measured: new Map(), visiting: new Set() };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) measurer.fragments.set(definition.name.value, definition);
  }
  const total: QueryMeasure = { depth: 0, cost: 0 };
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    const measure = measureSelections(definition.selectionSet, measurer);
    total.depth = Math.max(total.depth, measure.depth);
    total.cost += measure.cost;
  }
  return total;
}

function measureSelections(selectionSet: SelectionSetNode, measurer: Measurer): QueryMeasure {
  const result: QueryMeasure = { depth: 0, cost: 0 };
  for (const selection of selectionSet.selections) {
    let measure: QueryMeasure;
    if (selection.kind === Kind.FIELD) {
      const inner = selection.selectionSet
        ? measureSelections(selection.selectionSet, measurer)
        : { depth: 0, cost: 0 };
      measure = { depth: inner.depth + (selection.name.value === 'ofType' ? 0 : 1), cost: inner.cost + 1 };
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      measure = measureSelections(selection.selectionSet, measurer);
    } else {
      measure = measureFragment(selection.name.value, measurer);
    }
    result.depth = Math.max(result.depth, measure.depth);
    result.cost += measure.cost;
  }
  return result;
}

function measureFragment(name: string, measurer: Measurer): QueryMeasure {
  const known = measurer.measured.get(name);
  if (known !== undefined) return known;
  const fragment = measurer.fragments.get(name);
  if (fragment === undefined || measurer.visiting.has(name)) return { depth: 0, cost: 0 };
  measurer.visiting.add(name);
  const measure = measureSelections(fragment.selectionSet, measurer);
  measurer.visiting.delete(name);
  measurer.measured.set(name, measure);
  return measure;
}

/** QUERY_TOO_COMPLEX (400) for a document over the limits, naming what was measured. */
export function assertWithinLimits(document: DocumentNode, limits: QueryLimits = QUERY_LIMITS): void {
  const { depth, cost } = measureDocument(document);
  const problems: string[] = [];
  if (depth > limits.maxDepth) problems.push(`it is ${depth} levels deep (at most ${limits.maxDepth})`);
  if (cost > limits.maxCost)
    problems.push(`it selects ${cost} fields, counting aliases and fragment spreads (at most ${limits.maxCost})`);
  if (problems.length === 0) return;
  throw new AppError(
    ErrorCode.QUERY_TOO_COMPLEX,
    `The query is too complex: ${problems.join('; ')}. Ask for less in one request, or split it.`,
    {
      depth,
      cost,
      maxDepth: limits.maxDepth,
      maxCost: limits.maxCost,
    },
  );
}

/**
 * Brackets (`{`, `[`, `(`) nested deeper than this are refused before parsing: graphql-js parses
 * recursively, and a few thousand levels overflow its stack. Ten levels of fields with list and
 * object arguments stay far below it.
 */
export const MAX_SOURCE_NESTING = 64;

/** QUERY_TOO_COMPLEX for a source nested too deep to parse safely; strings, block strings and comments are skipped. */
export function assertSourceNesting(source: string, maxNesting: number = MAX_SOURCE_NESTING): void {
  let depth = 0;
  for (let i = 0; i < source.length; i++) {
    const ch = source[i];
    if (ch === '#') {
      while (i < source.length && source[i] !== '\n' && source[i] !== '\r') i++;
    } else if (ch === '"') {
      const block = source.startsWith('"""', i);
      const close = block ? '"""' : '"';
      i += close.length;
      while (i < source.length && !source.startsWith(close, i)) i += source[i] === '\\' ? 2 : 1;
      i += close.length - 1;
    } else if (ch === '{' || ch === '[' || ch === '(') {
      if (++depth > maxNesting) {
        throw new AppError(
          ErrorCode.QUERY_TOO_COMPLEX,
          `The query is too complex: its brackets nest more than ${maxNesting} deep. Ask for less in one ` +
            `request, or split it.`,
          { maxNesting },
        );
      }
    } else if (ch === '}' || ch === ']' || ch === ')') {
      depth = Math.max(0, depth - 1);
    }
  }
}

/**
 * True for a document graphql-js parsed from text. mercurius also takes a query sent as a JSON AST
 * (or any JSON value) and uses it as the document; Skillhost accepts only GraphQL text.
 */
export function isParsedDocument(document: unknown): document is DocumentNode {
  const node = document as DocumentNode | null;
  return (
    node !== null &&
    typeof node === 'object' &&
    node.kind === Kind.DOCUMENT &&
    Array.isArray(node.definitions) &&
    node.loc?.source instanceof Source
  );
}
