// A small XML reader and writer for the license file. The license is a fixed, flat document
// (one root, one level of text elements), so a full XML library would buy nothing; this reader
// still handles what hand-edited or tool-written files contain (declaration, comments, CDATA,
// entity and character references, self-closing tags) and reports errors with line and column,
// because document 1 puts the parser detail into `Cannot parse license - <detail>`.

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** Concatenated character data directly inside the element (entities decoded). */
  text: string;
}

export class XmlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'XmlError';
  }
}

const NAME = /[A-Za-z_:][A-Za-z0-9_:.-]*/y;
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

class Cursor {
  pos = 0;
  constructor(readonly src: string) {}

  fail(message: string, at = this.pos): never {
    const before = this.src.slice(0, at);
    const line = before.split('\n').length;
    const column = at - before.lastIndexOf('\n');
    throw new XmlError(`line ${line}, column ${column}: ${message}`);
  }

  startsWith(s: string): boolean {
    return this.src.startsWith(s, this.pos);
  }

  expect(s: string): void {
    if (!this.startsWith(s)) this.fail(`expected "${s}"`);
    this.pos += s.length;
  }

  skipSpace(): void {
    while (this.pos < this.src.length && /\s/.test(this.src[this.pos]!)) this.pos++;
  }

  name(): string {
    NAME.lastIndex = this.pos;
    const m = NAME.exec(this.src);
    if (m === null) this.fail('expected a name');
    this.pos += m[0].length;
    return m[0];
  }

  /** Skips `<!-- ... -->` and `<? ... ?>`; true when something was skipped. */
  skipMisc(): boolean {
    if (this.startsWith('<!--')) {
      const end = this.src.indexOf('-->', this.pos + 4);
      if (end < 0) this.fail('unterminated comment');
      this.pos = end + 3;
      return true;
    }
    if (this.startsWith('<?')) {
      const end = this.src.indexOf('?>', this.pos + 2);
      if (end < 0) this.fail('unterminated processing instruction');
      this.pos = end + 2;
      return true;
    }
    return false;
  }
}

function decodeText(c: Cursor, raw: string, at: number): string {
  return raw.replace(/&([^;&\s<]*);?/g, (whole, ref: string, offset: number) => {
    if (!whole.endsWith(';')) c.fail(`unterminated entity reference "&${ref}"`, at + offset);
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      if (!Number.isInteger(code) || code <= 0 || code > 0x10ffff || !/^#(x[0-9a-fA-F]+|[0-9]+)$/.test(ref)) {
        c.fail(`bad character reference "&${ref};"`, at + offset);
      }
      return String.fromCodePoint(code);
    }
    const e = ENTITIES[ref];
    if (e === undefined) c.fail(`unknown entity "&${ref};"`, at + offset);
    return e;
  });
}

function attributes(c: Cursor): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (;;) {
    const before = c.pos;
    c.skipSpace();
    if (c.startsWith('/>') || c.startsWith('>')) return attrs;
    if (c.pos === before) c.fail('expected white space before an attribute');
    const at = c.pos;
    const name = c.name();
    c.skipSpace();
    c.expect('=');
    c.skipSpace();
    const quote = c.src[c.pos];
    if (quote !== '"' && quote !== "'") c.fail('expected a quoted attribute value');
    const end = c.src.indexOf(quote, c.pos + 1);
    if (end < 0) c.fail('unterminated attribute value');
    const raw = c.src.slice(c.pos + 1, end);
    if (raw.includes('<')) c.fail('"<" in an attribute value');
    if (Object.hasOwn(attrs, name)) c.fail(`duplicate attribute "${name}"`, at);
    attrs[name] = decodeText(c, raw, c.pos + 1);
    c.pos = end + 1;
  }
}

function element(c: Cursor): XmlElement {
  c.expect('<');
  const name = c.name();
  const el: XmlElement = { name, attrs: attributes(c), children: [], text: '' };
  if (c.startsWith('/>')) {
    c.pos += 2;
    return el;
  }
  c.expect('>');
  for (;;) {
    if (c.pos >= c.src.length) c.fail(`element <${name}> is not closed`);
    if (c.startsWith('</')) {
      c.pos += 2;
      const close = c.name();
      if (close !== name) c.fail(`</${close}> closes <${name}>`);
      c.skipSpace();
      c.expect('>');
      return el;
    }
    if (c.startsWith('<![CDATA[')) {
      const end = c.src.indexOf(']]>', c.pos + 9);
      if (end < 0) c.fail('unterminated CDATA section');
      el.text += c.src.slice(c.pos + 9, end);
      c.pos = end + 3;
    } else if (c.skipMisc()) {
      continue;
    } else if (c.startsWith('<')) {
      el.children.push(element(c));
    } else {
      const next = c.src.indexOf('<', c.pos);
      const end = next < 0 ? c.src.length : next;
      el.text += decodeText(c, c.src.slice(c.pos, end), c.pos);
      c.pos = end;
    }
  }
}

/** The root element of a document; throws XmlError with line and column. */
export function parseXml(src: string): XmlElement {
  const c = new Cursor(src.charCodeAt(0) === 0xfeff ? src.slice(1) : src);
  for (;;) {
    c.skipSpace();
    if (c.startsWith('<!DOCTYPE')) c.fail('DOCTYPE is not allowed');
    if (!c.skipMisc()) break;
  }
  if (c.pos >= c.src.length) c.fail('empty document');
  if (!c.startsWith('<')) c.fail('text before the root element');
  const root = element(c);
  for (;;) {
    c.skipSpace();
    if (!c.skipMisc()) break;
  }
  if (c.pos < c.src.length) c.fail('content after the root element');
  return root;
}

export function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
