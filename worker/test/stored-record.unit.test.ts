import type { StoredRecord } from '../src/capture/stored-record';
import { parseStoredRecord } from '../src/capture/stored-record';

const http: StoredRecord = {
  q: 7,
  l: 'h',
  f: {
    ts: 1700000000.5,
    kind: 'response',
    method: 'GET',
    url: 'http://127.0.0.1/a',
    resource_type: 'fetch',
    status: 200,
    content_type: 'text/plain',
    headers: { 'content-type': 'text/plain' },
    body_length: 3,
    body_truncated: false,
    error: null,
  },
  c: 'abc',
  t: 'doc-1',
};

describe('a line stored in a chunk', () => {
  test('reads back as written, its fields in the order a client reads them', () => {
    const json = JSON.stringify(http);
    expect(JSON.stringify(parseStoredRecord(json))).toBe(json);
    const ws: StoredRecord = {
      q: 8,
      l: 'w',
      f: { ts: 1, kind: 'sent', url: 'ws://x/', binary: true, payload_length: 4 },
      b: 0,
      e: 'b64',
    };
    expect(parseStoredRecord(JSON.stringify(ws))).toEqual(ws);
  });

  test('with a field of the wrong type is refused by the field name', () => {
    const bad = JSON.stringify({ ...http, f: { ...http.f, status: '200' } });
    expect(() => parseStoredRecord(bad)).toThrow("stored line has a bad 'status'");
    expect(() => parseStoredRecord(JSON.stringify({ ...http, l: 'x' }))).toThrow("bad 'l'");
    expect(() => parseStoredRecord('[]')).toThrow("bad 'record'");
  });
});
