// A strict reader for the XML that Cursor-on-Target events are written in (docs/protocols/tak.md
// 2): elements, attributes, text, comments, CDATA and one leading XML declaration. Nothing
// else: a DOCTYPE, an entity declaration or any processing instruction is refused, so no input
// can define or expand an entity. Only the five predefined entities and numeric character
// references are read (XML 1.0 4.6, 4.1). Sizes are bounded (LIMITS), so memory and time are
// proportional to the input. Pure: no I/O, never throws.

export interface XmlElement {
  name: string;
  /** Attributes by name (a prototype-free object: `__proto__` is just a name). */
  attrs: Record<string, string>;
  children: XmlElement[];
  /** The element's own character data, its parts joined (child elements' text not included). */
  text: string;
}

export type XmlResult = { ok: true; root: XmlElement } | { ok: false; error: string };

export const XML_LIMITS = {
  /** Characters of one document (an event with a long remark is a few kB). */
  chars: 65_536,
  depth: 16,
  elements: 512,
  attributes: 64,
  nameChars: 128,
} as const;

// XML 1.0 2.3 names, restricted to ASCII: what CoT's element and attribute names are.
const NAME = /[A-Za-z_:][A-Za-z0-9_.:-]*/y;
const SPACE = /[ \t\r\n]*/y;
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };

class Bad extends Error {}

export function readXml(text: string): XmlResult {
  if (text.length > XML_LIMITS.chars) return { ok: false, error: `document is ${text.length} characters; at most ${XML_LIMITS.chars}` };
  try {
    return { ok: true, root: new Reader(text).document() };
  } catch (error) {
    if (error instanceof Bad) return { ok: false, error: error.message };
    return { ok: false, error: `unreadable: ${(error as Error).message}` };
  }
}

class Reader {
  readonly #s: string;
  #i = 0;
  #elements = 0;
  constructor(s: string) {
    this.#s = s;
  }

  document(): XmlElement {
    if (this.#s.charCodeAt(0) === 0xfeff) this.#i = 1;
    this.#space();
    if (this.#s.startsWith('<?xml', this.#i)) this.#declaration();
    this.#misc();
    if (this.#s[this.#i] !== '<') throw this.#bad('expected the root element');
    const root = this.#element(1);
    this.#misc();
    if (this.#i !== this.#s.length) throw this.#bad('content after the root element');
    return root;
  }

  #bad(what: string): Bad {
    return new Bad(`${what} at character ${this.#i}`);
  }

  #space(): void {
    SPACE.lastIndex = this.#i;
    SPACE.exec(this.#s);
    this.#i = SPACE.lastIndex;
  }

  /** Comments and white space between the declaration, the root and the end. */
  #misc(): void {
    for (;;) {
      this.#space();
      if (this.#s.startsWith('<!--', this.#i)) this.#comment();
      else if (this.#s.startsWith('<!', this.#i) || this.#s.startsWith('<?', this.#i)) throw this.#bad('DOCTYPE, declarations and processing instructions are not accepted');
      else return;
    }
  }

  #declaration(): void {
    const end = this.#s.indexOf('?>', this.#i);
    if (end < 0) throw this.#bad('unterminated XML declaration');
    const body = this.#s.slice(this.#i + 5, end);
    if (!/^(\s+[A-Za-z]+\s*=\s*("[^"<&]*"|'[^'<&]*'))*\s*$/.test(body)) throw this.#bad('malformed XML declaration');
    this.#i = end + 2;
  }

  #comment(): void {
    const end = this.#s.indexOf('-->', this.#i + 4);
    if (end < 0) throw this.#bad('unterminated comment');
    this.#i = end + 3;
  }

  #name(): string {
    NAME.lastIndex = this.#i;
    const m = NAME.exec(this.#s);
    if (!m) throw this.#bad('expected a name');
    if (m[0].length > XML_LIMITS.nameChars) throw this.#bad(`a name longer than ${XML_LIMITS.nameChars} characters`);
    this.#i = NAME.lastIndex;
    return m[0];
  }

  #element(depth: number): XmlElement {
    if (depth > XML_LIMITS.depth) throw this.#bad(`elements nested deeper than ${XML_LIMITS.depth}`);
    if (++this.#elements > XML_LIMITS.elements) throw this.#bad(`more than ${XML_LIMITS.elements} elements`);
    this.#i++; // '<'
    const name = this.#name();
    const attrs = Object.create(null) as Record<string, string>;
    let count = 0;
    for (;;) {
      const before = this.#i;
      this.#space();
      const c = this.#s[this.#i];
      if (c === '/') {
        if (this.#s[this.#i + 1] !== '>') throw this.#bad("expected '>' after '/'");
        this.#i += 2;
        return { name, attrs, children: [], text: '' };
      }
      if (c === '>') {
        this.#i++;
        break;
      }
      if (c === undefined) throw this.#bad('unterminated start tag');
      if (this.#i === before) throw this.#bad('expected white space before an attribute');
      const key = this.#name();
      this.#space();
      if (this.#s[this.#i] !== '=') throw this.#bad(`expected '=' after attribute ${key}`);
      this.#i++;
      this.#space();
      const quote = this.#s[this.#i];
      if (quote !== '"' && quote !== "'") throw this.#bad(`attribute ${key} is not quoted`);
      const end = this.#s.indexOf(quote, this.#i + 1);
      if (end < 0) throw this.#bad(`unterminated value of attribute ${key}`);
      const raw = this.#s.slice(this.#i + 1, end);
      if (raw.includes('<')) throw this.#bad(`'<' in the value of attribute ${key}`);
      if (key in attrs) throw this.#bad(`attribute ${key} given twice`);
      if (++count > XML_LIMITS.attributes) throw this.#bad(`more than ${XML_LIMITS.attributes} attributes`);
      attrs[key] = this.#unescape(raw, this.#i + 1);
      this.#i = end + 1;
    }
    const children: XmlElement[] = [];
    const text: string[] = [];
    for (;;) {
      const lt = this.#s.indexOf('<', this.#i);
      if (lt < 0) throw this.#bad(`element ${name} is not closed`);
      if (lt > this.#i) {
        const raw = this.#s.slice(this.#i, lt);
        if (raw.includes(']]>')) throw this.#bad("']]>' in character data");
        text.push(this.#unescape(raw, this.#i));
        this.#i = lt;
      }
      if (this.#s.startsWith('</', this.#i)) {
        this.#i += 2;
        const closing = this.#name();
        this.#space();
        if (this.#s[this.#i] !== '>') throw this.#bad(`expected '>' closing ${closing}`);
        if (closing !== name) throw this.#bad(`</${closing}> closes <${name}>`);
        this.#i++;
        return { name, attrs, children, text: text.join('') };
      }
      if (this.#s.startsWith('<!--', this.#i)) this.#comment();
      else if (this.#s.startsWith('<![CDATA[', this.#i)) {
        const end = this.#s.indexOf(']]>', this.#i + 9);
        if (end < 0) throw this.#bad('unterminated CDATA section');
        text.push(this.#s.slice(this.#i + 9, end));
        this.#i = end + 3;
      } else if (this.#s[this.#i + 1] === '!' || this.#s[this.#i + 1] === '?') throw this.#bad('declarations and processing instructions are not accepted');
      else children.push(this.#element(depth + 1));
    }
  }

  /** Character data or an attribute value with its references replaced. */
  #unescape(raw: string, at: number): string {
    if (!raw.includes('&')) return raw;
    return raw.replace(/&([^;&]{0,12});?/g, (whole, ref: string) => {
      if (!whole.endsWith(';')) throw new Bad(`'&' that starts no reference near character ${at}`);
      if (ref in PREDEFINED) return PREDEFINED[ref];
      const m = /^#(?:x([0-9A-Fa-f]{1,6})|([0-9]{1,7}))$/.exec(ref);
      if (!m) throw new Bad(`unknown entity &${ref}; near character ${at} (only the predefined ones and character references are read)`);
      const code = m[1] !== undefined ? parseInt(m[1], 16) : Number(m[2]);
      // XML 1.0 2.2 Char: no NUL, no surrogates, nothing past U+10FFFF.
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw new Bad(`character reference &${ref}; names no character`);
      return String.fromCodePoint(code);
    });
  }
}

/** Text or an attribute value written so readXml (and any XML reader) gives it back. */
export function escapeXml(value: string): string {
  return value.replace(/[<>&"']/g, (c) => `&${c === '<' ? 'lt' : c === '>' ? 'gt' : c === '&' ? 'amp' : c === '"' ? 'quot' : 'apos'};`)
    // XML 1.0 2.2: control characters other than tab, newline and return cannot be written at all.
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd');
}

/** The first child element of that name. */
export function child(e: XmlElement, name: string): XmlElement | undefined {
  return e.children.find((c) => c.name === name);
}
