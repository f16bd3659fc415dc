// The XML form of the statistics documents (document 1): scalar members as attributes, nested
// groups as child elements, arrays as repeated elements, and the scalars document 1 shows as
// element text (EQ, RQ, WaitingFiles2Write, URLRewrite, Memory) as child elements with text.
import { XMLBuilder } from 'fast-xml-parser';

const ELEMENT_TEXT = new Set(['EQ', 'RQ', 'WaitingFiles2Write', 'URLRewrite', 'Memory']);

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: true, suppressEmptyNode: true });

type Json = string | number | boolean | null | Json[] | { [k: string]: Json };

function toXmlTree(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) {
    if (Array.isArray(v)) out[k] = v.map((x) => (typeof x === 'object' && x !== null ? toXmlTree(x as Record<string, unknown>) : x));
    else if (typeof v === 'object' && v !== null) out[k] = toXmlTree(v as Record<string, unknown>);
    else if (ELEMENT_TEXT.has(k)) out[k] = v;
    else out[`@_${k}`] = v;
  }
  return out;
}

/** `{Host: {...}}` as `<?xml ...?><Host ...>...</Host>`. */
export function statisticsXml(doc: Record<string, Json | unknown>): string {
  const [root, body] = Object.entries(doc)[0]!;
  return `<?xml version="1.0" encoding="UTF-8"?>\n${builder.build({ [root]: toXmlTree(body as Record<string, unknown>) }) as string}`;
}
