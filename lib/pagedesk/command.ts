// The command segment of a pagedesk request (document 3, "Endpoints"): `<url>/<keyword>/edit/...`.
// The source URL is what comes before the keyword segment; a query written after the command
// (`/a.html/pagedesk/edit/default?x=1`) belongs to the source (`/a.html?x=1`).

/** Inline extraction (`extract/selector=...`): replaces the dom.extract setting values. */
export interface ExtractSpec { selector: string; attribute: string | null; includeSelf: boolean }

type Command =
  | { kind: 'default' }
  | { kind: 'query' }
  | { kind: 'template'; name: string }
  | { kind: 'extract'; inline: ExtractSpec | undefined };

export interface ParsedCommand {
  /** The source's path and query. */
  source: string;
  command: Command;
}

export class CommandError extends Error {
  override name = 'CommandError';
}

/** `<sel>` of the inline form: `:<id>`, `.<class>` or `<tag>` (a `#` cannot travel in a URL path). */
const INLINE_SELECTOR = /^(?::[A-Za-z_][\w-]*|\.[A-Za-z_-][\w-]*|[A-Za-z][A-Za-z0-9-]*)$/;
const ATTRIBUTE = /^[A-Za-z_:][\w:.-]*$/;

/** The `/<keyword>/edit` segment's index in `url`, -1 when the URL is no pagedesk request. */
export function commandAt(url: string, keyword: string): number {
  return url.indexOf(`/${keyword}/edit`);
}

/**
 * Parses the command of `url` (at `at`, from commandAt); throws CommandError for a shape
 * document 3 does not define.
 */
export function parseCommand(url: string, keyword: string, at: number): ParsedCommand {
  let source = url.slice(0, at);
  let rest = url.slice(at + keyword.length + 2);
  const q = rest.indexOf('?');
  if (q >= 0 && !source.includes('?')) {
    source += rest.slice(q);
    rest = rest.slice(0, q);
  }
  if (source === '') source = '/';
  return { source, command: commandOf(rest) };
}

function commandOf(rest: string): Command {
  if (rest === 'edit/default') return { kind: 'default' };
  if (rest === 'edit/query') return { kind: 'query' };
  const tpl = 'edit/default/template/';
  if (rest.startsWith(tpl) && rest.length > tpl.length) return { kind: 'template', name: decode(rest.slice(tpl.length)) };
  if (rest === 'edit/default/extract/default') return { kind: 'extract', inline: undefined };
  const ext = 'edit/default/extract/';
  if (rest.startsWith(ext)) return { kind: 'extract', inline: inlineSpec(decode(rest.slice(ext.length))) };
  throw new CommandError(`unknown pagedesk command "${rest}": expected edit/default, edit/query, edit/default/template/<name>, edit/default/extract/default or edit/default/extract/selector=<sel>[;attribute=<attr>][;includeSelf=true]`);
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    throw new CommandError(`bad percent-encoding in "${s}"`);
  }
}

function inlineSpec(text: string): ExtractSpec {
  let selector: string | undefined;
  let attribute: string | null = null;
  let includeSelf = false;
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    if (name === 'selector' && INLINE_SELECTOR.test(value)) selector = value.startsWith(':') ? `#${value.slice(1)}` : value;
    else if (name === 'attribute' && ATTRIBUTE.test(value)) attribute = value;
    else if (name === 'includeSelf' && (value === 'true' || value === 'false')) includeSelf = value === 'true';
    else throw new CommandError(`bad inline extraction part "${part}": selector=:<id>|.<class>|<tag>, attribute=<name>, includeSelf=true|false`);
  }
  if (selector === undefined) throw new CommandError('inline extraction needs selector=:<id>, .<class> or <tag>');
  return { selector, attribute, includeSelf };
}
