import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { classify } from '../src/http/request-tracker';
import type { RequestRow } from '../src/log/request-log';
import { RequestLog } from '../src/log/request-log';
import {
  LOG_HEADER,
  OLD_LOG_HEADER,
  parseCsv,
  readLogRows,
} from '@persona-browser/testkit/request-log-file';
import { requestsPerHour } from '@persona-browser/service-kit';

/** The request log writer on its own, with a hand-driven clock and a scratch folder. */

let dir: string;
let folder: string;
let clock: Date;
const now = (): Date => clock;
const at = (iso: string): void => {
  clock = new Date(iso);
};
const file = (day: string): string => path.join(folder, `${day}.csv`);
const read = (day: string): string => fs.readFileSync(file(day), 'utf8');
/** Data records of a day file (header checked and dropped). */
const records = (day: string): string[][] => {
  const [header, ...rest] = parseCsv(read(day));
  expect(header?.join(',')).toBe(LOG_HEADER);
  return rest;
};

const row = (id: string, over: Partial<RequestRow> = {}): RequestRow => ({
  id,
  method: 'POST',
  kind: 'ops',
  name: 'navigate',
  path: `/api/v1/ops/${id}/navigate`,
  credential: '',
  label: '',
  ...over,
});

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-reqlog-'));
  folder = path.join(dir, 'requests');
  at('2026-03-10T12:00:00.000Z');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('RequestLog rows', () => {
  test('a new day file gets the header once, then one complete line per row', () => {
    const log = new RequestLog(dir, now);
    log.start(row('aaaa0001'));
    at('2026-03-10T12:00:01.250Z');
    log.end(row('aaaa0001'), 200, 1250);
    const text = read('2026-03-10');
    expect(text.split('\n')).toEqual([
      LOG_HEADER,
      '2026-03-10T12:00:00.000Z,start,aaaa0001,POST,ops,navigate,/api/v1/ops/aaaa0001/navigate,,,,',
      '2026-03-10T12:00:01.250Z,end,aaaa0001,POST,ops,navigate,/api/v1/ops/aaaa0001/navigate,200,1250,,',
      '',
    ]);
  });

  test('a second writer on the same day appends without a second header', () => {
    new RequestLog(dir, now).start(row('aaaa0001'));
    new RequestLog(dir, now).start(row('aaaa0002'));
    const lines = read('2026-03-10').split('\n');
    expect(lines.filter((l) => l === LOG_HEADER)).toHaveLength(1);
    expect(records('2026-03-10').map((r) => r[2])).toEqual(['aaaa0001', 'aaaa0002']);
  });

  test('an end row goes to the file of its start even after midnight UTC', () => {
    const log = new RequestLog(dir, now);
    at('2026-03-10T23:59:59.900Z');
    log.start(row('before00'));
    at('2026-03-11T00:00:00.300Z');
    log.start(row('after000'));
    log.end(row('before00'), 200, 400);
    at('2026-03-11T00:00:00.350Z');
    log.end(row('after000'), 404, 50);

    expect(records('2026-03-10').map((r) => [r[0], r[1], r[2], r[7]])).toEqual([
      ['2026-03-10T23:59:59.900Z', 'start', 'before00', ''],
      ['2026-03-11T00:00:00.300Z', 'end', 'before00', '200'],
    ]);
    expect(records('2026-03-11').map((r) => [r[1], r[2], r[7]])).toEqual([
      ['start', 'after000', ''],
      ['end', 'after000', '404'],
    ]);
  });

  test('status null gives an empty status field; ms is an integer', () => {
    const log = new RequestLog(dir, now);
    log.start(row('dead0001'));
    log.end(row('dead0001'), null, 5012.6);
    const [, end] = records('2026-03-10');
    expect(end).toHaveLength(11);
    expect(end?.[1]).toBe('end');
    expect(end?.[7]).toBe('');
    expect(end?.[8]).toMatch(/^\d+$/);
    expect(Math.abs(Number(end?.[8]) - 5012.6)).toBeLessThanOrEqual(1);
    expect(read('2026-03-10')).toContain(
      ',end,dead0001,POST,ops,navigate,/api/v1/ops/dead0001/navigate,,',
    );
  });

  test('fields with commas, quotes or line breaks are CSV-quoted and read back intact', () => {
    const log = new RequestLog(dir, now);
    const odd = row('quote001', {
      kind: 'plugin',
      name: 'odd,"name"',
      path: '/api/v1/a,b"c/plugin/odd,"name"',
      method: 'PO\nST',
    });
    log.start(odd);
    log.end(odd, 200, 3);
    const text = read('2026-03-10');
    expect(text).toContain('"odd,""name"""');
    expect(text).toContain('"/api/v1/a,b""c/plugin/odd,""name"""');
    const recs = records('2026-03-10');
    expect(recs).toHaveLength(2);
    for (const r of recs) {
      expect(r).toHaveLength(11);
      expect(r.slice(2, 7)).toEqual(['quote001', 'PO\nST', 'plugin', 'odd,"name"', odd.path]);
    }
  });
});

describe('who made each call', () => {
  const KEY_ROW = { credential: 'key', label: '' };
  const TOKEN_ROW = { credential: 'tok_0123456789abcdef', label: 'dashboard, "kitchen" screen' };

  test('credential and label close both rows: `key`, a token id and its label, or empty', () => {
    const log = new RequestLog(dir, now);
    for (const [id, who] of [
      ['byk00001', KEY_ROW],
      ['byt00001', TOKEN_ROW],
      ['nobody01', { credential: '', label: '' }],
    ] as const) {
      log.start(row(id, who));
      log.end(row(id, who), 200, 4);
    }
    const recs = records('2026-03-10');
    expect(recs.map((r) => [r[1], r[2], r[9], r[10]])).toEqual([
      ['start', 'byk00001', 'key', ''],
      ['end', 'byk00001', 'key', ''],
      ['start', 'byt00001', TOKEN_ROW.credential, TOKEN_ROW.label],
      ['end', 'byt00001', TOKEN_ROW.credential, TOKEN_ROW.label],
      ['start', 'nobody01', '', ''],
      ['end', 'nobody01', '', ''],
    ]);
    expect(read('2026-03-10')).toContain(',tok_0123456789abcdef,"dashboard, ""kitchen"" screen"\n');
  });

  test('a label with line breaks stays on its row: it cannot write a row of its own', async () => {
    const forged = 'x\n2026-03-10T12:00:00.000Z,start,forged01,GET,ops,navigate,/p,,,,\r\ny';
    const log = new RequestLog(dir, now);
    log.start(row('lbl00001', { credential: 'tok_1', label: forged }));
    const lines = read('2026-03-10').split('\n');
    expect(lines).toHaveLength(3); // the header, the row, the end of the last line
    expect(records('2026-03-10').map((r) => r[10])).toEqual([forged.replace(/[\r\n]/g, ' ')]);
    // The request counts (read line by line) see one request, not two.
    const counts = await requestsPerHour(dir, 1, new Date('2026-03-10T12:30:00.000Z'));
    expect(counts).toEqual([{ hour: '2026-03-10T12:00:00Z', count: 1 }]);
  });

  test('a day file an older worker began keeps its header; every reader reads old and new rows', async () => {
    fs.mkdirSync(folder, { recursive: true });
    const oldRows = [
      '2026-03-10T09:00:00.000Z,start,old00001,GET,ops,screenshot,/api/v1/ops/p/screenshot,,',
      '2026-03-10T09:00:00.040Z,end,old00001,GET,ops,screenshot,/api/v1/ops/p/screenshot,200,40',
    ];
    fs.writeFileSync(file('2026-03-10'), `${OLD_LOG_HEADER}\n${oldRows.join('\n')}\n`);
    const log = new RequestLog(dir, now);
    log.start(row('new00001', TOKEN_ROW));
    log.end(row('new00001', TOKEN_ROW), 200, 9);
    const lines = read('2026-03-10').split('\n');
    expect(lines[0]).toBe(OLD_LOG_HEADER);
    expect(lines.filter((l) => l.startsWith('time,'))).toHaveLength(1);
    // The test kit's reader: fields by position, the new ones empty on old rows.
    expect(readLogRows(dir).map((r) => [r.event, r.id, r.status, r.credential, r.label])).toEqual([
      ['start', 'old00001', '', '', ''],
      ['end', 'old00001', '200', '', ''],
      ['start', 'new00001', '', TOKEN_ROW.credential, TOKEN_ROW.label],
      ['end', 'new00001', '200', TOKEN_ROW.credential, TOKEN_ROW.label],
    ]);
    // The request counts the worker and the waker answer: both starts, old and new.
    const counts = await requestsPerHour(dir, 4, new Date('2026-03-10T12:30:00.000Z'));
    expect(counts.map((c) => c.count)).toEqual([1, 0, 0, 1]);
  });

  test('a file of the current header is read whole by the same readers', async () => {
    const log = new RequestLog(dir, now);
    log.start(row('cur00001', KEY_ROW));
    log.end(row('cur00001', KEY_ROW), 401, 1);
    expect(read('2026-03-10').split('\n')[0]).toBe(LOG_HEADER);
    expect(readLogRows(dir).map((r) => [r.event, r.status, r.credential])).toEqual([
      ['start', '', 'key'],
      ['end', '401', 'key'],
    ]);
    const counts = await requestsPerHour(dir, 1, new Date('2026-03-10T12:30:00.000Z'));
    expect(counts.map((c) => c.count)).toEqual([1]);
  });
});

describe('retention', () => {
  const seed = (names: string[]): void => {
    fs.mkdirSync(folder, { recursive: true });
    for (const n of names) fs.writeFileSync(path.join(folder, n), `${LOG_HEADER}\n`);
  };

  test('the first write of a day deletes day files older than 50 days, nothing else', () => {
    // Today is 2026-03-10: 2026-01-19 is exactly 50 days old, 2026-01-18 is 51.
    const old = ['2025-03-10.csv', '2025-12-31.csv', '2026-01-18.csv'];
    const kept = [
      '2026-01-19.csv',
      '2026-02-01.csv',
      '2026-03-09.csv',
      'notes.txt',
      '2020-01-01.csv.bak',
      '2020-01-01.txt',
      'backup-2020-01-01.csv',
      '20200101.csv',
    ];
    seed([...old, ...kept]);
    const log = new RequestLog(dir, now);
    expect(fs.readdirSync(folder).sort()).toEqual([...old, ...kept].sort()); // not on construction
    log.start(row('ret00001'));
    expect(fs.readdirSync(folder).sort()).toEqual([...kept, '2026-03-10.csv'].sort());
  });

  test('a worker that keeps running prunes again on the first write of the next day', () => {
    seed(['2026-01-19.csv', '2026-01-20.csv']);
    const log = new RequestLog(dir, now);
    log.start(row('day00001'));
    expect(fs.existsSync(file('2026-01-19'))).toBe(true);
    at('2026-03-11T00:00:01.000Z');
    log.end(row('day00001'), 200, 60_000); // still goes to 2026-03-10, but it is a new day
    expect(fs.existsSync(file('2026-01-19'))).toBe(false);
    expect(fs.existsSync(file('2026-01-20'))).toBe(true);
    expect(records('2026-03-10').map((r) => r[1])).toEqual(['start', 'end']);
  });

  test('a missing requests folder is created by the first write', () => {
    expect(fs.existsSync(folder)).toBe(false);
    new RequestLog(dir, now).start(row('mk000001'));
    expect(records('2026-03-10')).toHaveLength(1);
  });
});

describe('damaged or vanished files', () => {
  const full =
    '2026-03-10T08:00:00.000Z,end,feed0001,GET,ops,screenshot,/api/v1/ops/p/screenshot,200,31,key,';

  test('a last row that lost only its newline is mended: every line has 11 columns', () => {
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(file('2026-03-10'), `${LOG_HEADER}\n${full}`);
    const log = new RequestLog(dir, now);
    log.start(row('next0001'));
    log.end(row('next0001'), 200, 7);
    const text = read('2026-03-10');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.slice(0, -1).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe(LOG_HEADER);
    expect(lines[1]).toBe(full);
    for (const line of lines) expect(parseCsv(line)[0]).toHaveLength(11);
    expect(lines.slice(2).map((l) => parseCsv(l)[0]?.[2])).toEqual(['next0001', 'next0001']);
  });

  test('a row torn mid-field is left alone and the next row starts on its own line', () => {
    fs.mkdirSync(folder, { recursive: true });
    const torn = '2026-03-10T09:00:00.000Z,start,torn0001,PO';
    fs.writeFileSync(file('2026-03-10'), `${LOG_HEADER}\n${full}\n${torn}`);
    new RequestLog(dir, now).start(row('next0002'));
    const lines = read('2026-03-10').split('\n');
    expect(lines).toEqual([
      LOG_HEADER,
      full,
      torn,
      '2026-03-10T12:00:00.000Z,start,next0002,POST,ops,navigate,/api/v1/ops/next0002/navigate,,,,',
      '',
    ]);
  });

  test('a day file deleted while the worker runs comes back with its header', () => {
    const log = new RequestLog(dir, now);
    log.start(row('gone0001'));
    fs.rmSync(file('2026-03-10'));
    log.end(row('gone0001'), 200, 5);
    expect(records('2026-03-10').map((r) => [r[1], r[2]])).toEqual([['end', 'gone0001']]);
  });

  test('a requests folder deleted while the worker runs is recreated', () => {
    const log = new RequestLog(dir, now);
    log.start(row('gone0002'));
    fs.rmSync(folder, { recursive: true });
    log.end(row('gone0002'), 200, 5);
    log.start(row('gone0003'));
    expect(records('2026-03-10').map((r) => [r[1], r[2]])).toEqual([
      ['end', 'gone0002'],
      ['start', 'gone0003'],
    ]);
  });
});

describe('day files held open between rows', () => {
  /** Descriptors this process holds on files in the requests folder. */
  const held = (): string[] =>
    fs
      .readdirSync('/proc/self/fd')
      .map((fd) => {
        try {
          return fs.readlinkSync(path.join('/proc/self/fd', fd));
        } catch {
          return '';
        }
      })
      .filter((target) => target.startsWith(folder + path.sep));

  test('a day file moved away keeps its rows; the next row starts a new file at the path', () => {
    const log = new RequestLog(dir, now);
    log.start(row('move0001'));
    fs.renameSync(file('2026-03-10'), path.join(dir, 'archived.csv'));
    log.end(row('move0001'), 200, 5);
    expect(records('2026-03-10').map((r) => [r[1], r[2]])).toEqual([['end', 'move0001']]);
    const archived = parseCsv(fs.readFileSync(path.join(dir, 'archived.csv'), 'utf8'));
    expect(archived.map((r) => r[1])).toEqual(['event', 'start']);
  });

  test('a day file emptied by hand starts again with its header', () => {
    const log = new RequestLog(dir, now);
    log.start(row('trunc001'));
    fs.truncateSync(file('2026-03-10'), 0);
    log.end(row('trunc001'), 200, 5);
    log.start(row('trunc002'));
    expect(records('2026-03-10').map((r) => [r[1], r[2]])).toEqual([
      ['end', 'trunc001'],
      ['start', 'trunc002'],
    ]);
  });

  test("a past day's file is let go once its requests have ended, and close() lets go of all", () => {
    const log = new RequestLog(dir, now);
    at('2026-03-10T23:59:59.000Z');
    log.start(row('late0001'));
    at('2026-03-11T00:00:01.000Z');
    log.start(row('next0001'));
    expect(held().sort()).toEqual([file('2026-03-10'), file('2026-03-11')]);
    log.end(row('late0001'), 200, 2000);
    expect(held()).toEqual([file('2026-03-11')]);
    log.end(row('next0001'), 200, 5);
    // Days go by with a request each: only today's file stays open.
    for (const day of ['2026-03-12', '2026-03-13', '2026-03-14']) {
      at(`${day}T10:00:00.000Z`);
      log.start(row(`d${day.slice(-2)}00000`));
      log.end(row(`d${day.slice(-2)}00000`), 200, 1);
      expect(held()).toEqual([file(day)]);
    }
    log.close();
    expect(held()).toEqual([]);
    log.start(row('again001')); // a row after close() opens the file again
    expect(
      records('2026-03-14')
        .map((r) => [r[1], r[2]])
        .at(-1),
    ).toEqual(['start', 'again001']);
  });
});

describe('classify', () => {
  test.each([
    ['/api/v1/p1/plugin/archive/check', 'plugin', 'archive/check'],
    ['/api/v1/p1/plugin/social/get-posts-profile', 'plugin', 'social/get-posts-profile'],
    ['/api/v1/my%20page/plugin/misc/news-search', 'plugin', 'misc/news-search'],
    ['/api/v1/ops/create-page', 'ops', 'create-page'],
    ['/api/v1/ops/p1/navigate', 'ops', 'navigate'],
    ['/api/v1/ops/p1/destroy-page', 'ops', 'destroy-page'],
    ['/api/v1/ops/plugin/lease', 'ops', 'lease'],
    ['/api/v1/ops/p1/navigate/', 'ops', 'navigate'],
    ['/api/v1/primitive/p1/click-element', 'primitive', 'click-element'],
    ['/api/v1/plugins', 'plugins', ''],
    ['/api/v1/plugins/archive_check/docs', 'plugins', ''],
    ['/api/v1/media/0123abcd', 'media', ''],
    ['/api/v1/somewhere/else', 'somewhere', ''],
    // Express routes paths case-insensitively, so the log names them like their routes.
    ['/API/V1/OPS/p1/Navigate', 'ops', 'navigate'],
    ['/Api/v1/P1/Plugin/Archive/Check', 'plugin', 'archive/check'],
  ])('%s: kind %p, name %p', (p, kind, name) => {
    expect(classify(p)).toEqual({ kind, name });
  });
});
