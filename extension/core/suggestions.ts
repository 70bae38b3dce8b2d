// Suggested changes in comment threads: the value a reviewer proposes for an attribute, shown as
// a diff of the attribute (old → new), written as text and read back, and whether it may be
// applied now. No VS Code here.
import type * as Yaml from 'yaml';
import type { ChangeComment, CommentSuggestion } from '../../contract/api/change-control';
import { isApplicableSuggestion } from '../../contract/threads';
import { serializeState } from './change-documents';

const yaml = (): typeof Yaml => require('yaml') as typeof Yaml;

/** The lines of one side: `attribute: value` as the documents show it (YAML, a block for a structured value). */
function sideLines(attribute: string, value: unknown): string[] {
  return serializeState({ [attribute]: value })
    .replace(/\n$/, '')
    .split('\n');
}

/** The suggestion as a diff of its attribute: what it replaces (none when absent) and what it proposes. */
export function suggestionDiff(
  s: Pick<CommentSuggestion, 'attribute' | 'value' | 'previous' | 'previous_absent'>,
): string {
  const removed = s.previous_absent ? [] : sideLines(s.attribute, s.previous).map((l) => `- ${l}`);
  const added = sideLines(s.attribute, s.value).map((l) => `+ ${l}`);
  return [...removed, ...added].join('\n');
}

/** Where a suggestion stands: applied (by whom, when), outdated, or waiting. */
export function suggestionState(s: Pick<CommentSuggestion, 'applied_at' | 'applied_by' | 'outdated'>): string {
  if (s.applied_at)
    return `Applied${s.applied_by ? ` by ${s.applied_by.display || s.applied_by.username}` : ''} on ${s.applied_at.slice(0, 10)}.`;
  if (s.outdated) return 'Outdated: the attribute changed in the branch since; look at it again before applying.';
  return 'Not applied yet.';
}

/** The suggestion as Markdown under a comment: a heading, the diff in a fenced block, its state. */
export function suggestionMarkdown(s: CommentSuggestion): string {
  const fence = '```';
  return [
    `**Suggested change** to \`${s.attribute}\``,
    `${fence}diff`,
    suggestionDiff(s),
    fence,
    `_${suggestionState(s)}_`,
  ].join('\n');
}

/** Whether a suggestion can be applied now by someone the request lets apply (`allowed`): not applied, not outdated. */
export const isApplicable = isApplicableSuggestion;

/** The comments of a request whose suggestions can be applied now, oldest first. */
export function applicableSuggestions(comments: readonly ChangeComment[], allowed: boolean): ChangeComment[] {
  return comments.filter((c) => isApplicable(c, allowed)).sort((a, b) => a.id - b.id);
}

/** Menus read this: `suggestion;` then `applicable;`, `applied;` or `outdated;` (empty for a plain comment). */
export function suggestionContext(c: Pick<ChangeComment, 'suggestion'>, allowed: boolean): string {
  if (!c.suggestion) return '';
  if (c.suggestion.applied_at) return 'suggestion;applied;';
  if (c.suggestion.outdated) return 'suggestion;outdated;';
  return allowed ? 'suggestion;applicable;' : 'suggestion;';
}

/** A value as one line to edit (an input box): YAML for a plain value, JSON for anything structured or multi-line. */
export function valueAsInput(value: unknown): string {
  if (value === undefined) return '';
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  if (typeof value === 'string' && /[\n\r]/.test(value)) return JSON.stringify(value);
  return yaml().stringify(value).trimEnd();
}

/** A value typed as one line (or a block) read as YAML: `R3` is a string, `42` a number, `[1, 2]` a list, `null` none. */
export function parseValue(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  const doc = yaml().parseDocument(text);
  if (doc.errors.length > 0) return { ok: false, message: doc.errors[0]!.message.split('\n')[0]! };
  return { ok: true, value: doc.toJS() ?? null };
}

/**
 * A comment written with a suggestion block, GitHub's way: the text, and the value between
 * ```` ```suggestion ```` and ```` ``` ```` (read as YAML); null when there is no block.
 */
export function suggestionBlock(text: string): { text: string; valueText: string } | null {
  const m = /(^|\n)```suggestion[ \t]*\r?\n([\s\S]*?)\r?\n?```[ \t]*(?=\n|$)/.exec(text);
  if (!m) return null;
  const rest = (text.slice(0, m.index) + text.slice(m.index + m[0].length)).trim();
  return { text: rest, valueText: m[2]! };
}

/** The value at a dot path of a state (`interfaces.0.name` reads index 0), or undefined when absent. */
export function valueAt(state: Record<string, unknown> | null | undefined, path: string): unknown {
  let value: unknown = state;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.prototype.hasOwnProperty.call(value, part))
      return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
