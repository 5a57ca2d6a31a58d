import { evaluatedStringPair, resultString, scanJsonString } from '../src/devtools/wire-commands';
import type { WireReply } from '../src/devtools/wire-commands';
import { JsonText, encodeJson, withJsonParsed } from '../src/json-text';

/**
 * The text a page's HTML travels in, never decoded: a JSON string literal scanned for its end
 * and length, a reply checked for the one shape the splice reads, and a reply body encoded with
 * that text spliced in. Each is compared with what JSON.parse and JSON.stringify make of it.
 */

/** JSON text as Chromium writes it: everything beyond ASCII escaped as \uXXXX. */
const chromiumJson = (value: unknown): string =>
  JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

const AWKWARD = [
  '',
  'plain',
  'quote " inside',
  'ends with a quote "',
  'backslash \\ and \\" together',
  '\\',
  '\\\\',
  'naïve café ✓',
  'emoji 😀 two units',
  'line\nbreaks\r\n\ttabs',
  'controls \u0001\u001f\u007f',
  'separators \u2028\u2029',
  'lone surrogate \ud800 here',
  '</script><!-- -->',
  '"'.repeat(50),
  '\n'.repeat(5000) + 'x',
];

describe('scanJsonString', () => {
  const named = AWKWARD.map((value) => [
    value.length > 40
      ? `${JSON.stringify(value.slice(0, 12))}… (${value.length} long)`
      : JSON.stringify(value),
    value,
  ]);
  test.each(named)('%s: its end and length, as text and as ASCII bytes', (_name, value) => {
    for (const literal of [JSON.stringify(value), chromiumJson(value)]) {
      const text = `${literal},"next"`;
      const scanned = scanJsonString(text, 0);
      expect(scanned).toEqual({ end: literal.length - 1, length: value.length });
      expect(JSON.parse(text.slice(0, (scanned?.end ?? 0) + 1))).toBe(value);
    }
    const bytes = Buffer.from(`[${chromiumJson(value)}]`);
    expect(scanJsonString(bytes, 1)).toEqual({
      end: bytes.length - 2,
      length: value.length,
    });
  });

  test('no literal opens there, or it never closes: null', () => {
    expect(scanJsonString('abc', 0)).toBeNull();
    expect(scanJsonString('"abc', 0)).toBeNull();
    expect(scanJsonString('"abc\\"', 0)).toBeNull();
    expect(scanJsonString(Buffer.from('"abc\\"'), 0)).toBeNull();
  });
});

describe('evaluatedStringPair', () => {
  const reply = (text: string): WireReply => ({
    id: 1500000007,
    method: 'Runtime.evaluate',
    sessionId: 'ABC',
    bytes: Buffer.from(text),
  });
  const result = (value: string, id = 1500000007, session = 'ABC'): string =>
    `{"id":${id},"result":{"result":{"type":"object","value":${value}}},"sessionId":"${session}"}`;
  const title = 'Title "t" \\ é 😀';
  const html = '<p>naïve "q"</p>\n\u2028';

  test.each([
    ['as Chromium writes it (ASCII)', chromiumJson([title, html])],
    ['with raw UTF-8 in it', JSON.stringify([title, html])],
  ])("%s: the first decoded, the second's text as written, and its length", (_name, value) => {
    const pair = evaluatedStringPair(reply(result(value)));
    expect(pair?.first).toBe(title);
    expect(JSON.parse(pair?.second.toString() ?? 'null')).toBe(html);
    expect(pair?.length).toBe(html.length);
  });

  test.each([
    [
      'a string, not a pair',
      `{"id":1500000007,"result":{"result":{"type":"string","value":"x"}},"sessionId":"ABC"}`,
    ],
    ['another id', result(chromiumJson([title, html]), 1500000008)],
    ['another session', result(chromiumJson([title, html]), 1500000007, 'ABD')],
    ['three strings', result(chromiumJson([title, html, 'x']))],
    ['one string', result(chromiumJson([html]))],
    ['a number first', result('[1,"x"]')],
    [
      'an exception beside it',
      result(chromiumJson([title, html])).replace(
        '}},"sessionId"',
        '},"exceptionDetails":{"text":"x"}},"sessionId"',
      ),
    ],
    [
      'an error',
      `{"id":1500000007,"error":{"code":-32000,"message":"Cannot find context with specified id"},"sessionId":"ABC"}`,
    ],
    ['a cut reply', `{"id":1500000007,"result":{"result":`],
  ])('%s: null, read in full instead', (_name, text) => {
    expect(evaluatedStringPair(reply(text))).toBeNull();
  });
});

describe('resultString', () => {
  const reply = (text: string): WireReply => ({
    id: 1500000009,
    method: 'DOM.getOuterHTML',
    sessionId: 'ABC',
    bytes: Buffer.from(text),
  });
  const result = (value: string, field = 'outerHTML', id = 1500000009): string =>
    `{"id":${id},"result":{"${field}":${value}},"sessionId":"ABC"}`;

  test.each(AWKWARD.map((s) => [JSON.stringify(s).slice(0, 40), s]))(
    '%s: the text as written, standing for the string, and its length',
    (_name, value) => {
      for (const written of [chromiumJson(value), JSON.stringify(value)]) {
        const read = resultString(reply(result(written)), 'outerHTML');
        expect(read?.text.toString()).toBe(written);
        expect(JSON.parse(read?.text.toString() ?? 'null')).toBe(value);
        expect(read?.length).toBe(value.length);
      }
    },
  );

  test.each([
    ['another field', result('"x"', 'innerHTML')],
    ['another id', result('"x"', 'outerHTML', 1500000010)],
    ['a number', result('1')],
    ['two strings', result('"a","b"')],
    ['more fields', `{"id":1500000009,"result":{"outerHTML":"a","more":"b"},"sessionId":"ABC"}`],
    [
      'an error',
      `{"id":1500000009,"error":{"code":-32000,"message":"No node with given id found"},"sessionId":"ABC"}`,
    ],
    ['a cut reply', `{"id":1500000009,"result":{"outerHTML":"ab`],
  ])('%s: null, read in full instead', (_name, text) => {
    expect(resultString(reply(text), 'outerHTML')).toBeNull();
  });
});

describe('encodeJson', () => {
  test('a body without JSON text: what JSON.stringify gives', () => {
    const body = { success: true, page_id: 'p"1', n: 3, skip: undefined, nested: { a: [1, 'é'] } };
    expect(Buffer.concat(encodeJson(body)).toString()).toBe(JSON.stringify(body));
  });

  test('JSON text spliced in where it stands, fields without a JSON form left out', () => {
    const html = 'naïve "q" \\ 😀\n';
    const body = {
      skipped: undefined,
      success: true,
      content: new JsonText(Buffer.from(chromiumJson(html))),
      also: undefined,
      content_length: html.length,
    };
    const text = Buffer.concat(encodeJson(body)).toString();
    expect(JSON.parse(text)).toEqual({ success: true, content: html, content_length: html.length });
    expect(Object.keys(JSON.parse(text) as object)).toEqual([
      'success',
      'content',
      'content_length',
    ]);
    expect(JSON.parse(text)).toEqual(withJsonParsed(body));
  });
});
