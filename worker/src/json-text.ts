/**
 * A value that is already JSON text, to be written into a reply as it is: a page's HTML comes
 * from Chromium as an escaped JSON string, and decoding and encoding it again would cost passes
 * over every byte (see devtools/wire-commands.ts). Only `encodeJson` splices it in; anything
 * that needs the value itself parses it.
 */
export class JsonText {
  /** @param json the UTF-8 bytes of one JSON value */
  constructor(readonly json: Buffer) {}

  static of(value: unknown): JsonText {
    return new JsonText(Buffer.from(JSON.stringify(value)));
  }

  /** The value the text stands for. */
  parse(): unknown {
    return JSON.parse(this.json.toString('utf8'));
  }
}

/** `body` with every top-level JsonText replaced by its value (what the body means). */
export function withJsonParsed(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body))
    out[key] = value instanceof JsonText ? value.parse() : value;
  return out;
}

/**
 * `body` as the UTF-8 bytes of its JSON, in pieces to be written one after the other, its
 * top-level JsonText values spliced in as the very buffers they are (no copy): the text
 * `JSON.stringify` gives for the parsed body, up to how strings are escaped.
 */
export function encodeJson(body: Record<string, unknown>): Buffer[] {
  const values = Object.values(body);
  if (!values.some((v) => v instanceof JsonText)) return [Buffer.from(JSON.stringify(body))];
  const parts: Buffer[] = [];
  let text = '{';
  let first = true;
  for (const [key, value] of Object.entries(body)) {
    // As JSON.stringify does: a field whose value has no JSON form (undefined) is left out.
    const encoded: string | undefined = value instanceof JsonText ? '' : JSON.stringify(value);
    if (encoded === undefined) continue;
    text += `${first ? '' : ','}${JSON.stringify(key)}:`;
    first = false;
    if (value instanceof JsonText) {
      parts.push(Buffer.from(text), value.json);
      text = '';
    } else {
      text += encoded;
    }
  }
  parts.push(Buffer.from(`${text}}`));
  return parts;
}
