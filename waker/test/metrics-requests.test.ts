import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MAX_HOURS, requestsPerHour } from '../src/metrics';

/**
 * Request log files written the way the worker writes them (worker/src/log/request-log.ts):
 * a header on an empty file, then one line per row, fields quoted only when they hold a comma,
 * a quote or a line break, `status` and `ms` empty on `start` rows.
 */
const HEADER = 'time,event,id,method,kind,name,path,status,ms';
const csvField = (v: string): string => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

let personaDir: string;

function append(
  at: string,
  event: 'start' | 'end',
  id: string,
  p = '/api/v1/ops/create-page',
  day = at.slice(0, 10),
) {
  const file = path.join(personaDir, 'requests', `${day}.csv`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fresh = !fs.existsSync(file) || fs.statSync(file).size === 0;
  const fields = [at, event, id, 'POST', 'ops', 'create-page', p];
  fields.push(event === 'end' ? '200' : '', event === 'end' ? '12' : '');
  fs.appendFileSync(file, (fresh ? HEADER + '\n' : '') + fields.map(csvField).join(',') + '\n');
}

/** A request: its start row, and its end row a little later (unless the worker died). */
function request(at: string, opts: { end?: boolean; path?: string } = {}) {
  const id = Math.floor(Math.random() * 0xffffffff)
    .toString(16)
    .padStart(8, '0');
  append(at, 'start', id, opts.path);
  if (opts.end !== false) {
    append(new Date(Date.parse(at) + 40).toISOString(), 'end', id, opts.path);
  }
}

const rawAppend = (day: string, text: string) =>
  fs.appendFileSync(path.join(personaDir, 'requests', `${day}.csv`), text);

beforeEach(() => {
  personaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-requests-'));
});
afterEach(() => fs.rmSync(personaDir, { recursive: true, force: true }));

const NOW = new Date('2026-11-23T17:25:00.000Z');

test('start rows per UTC hour, zero-filled, oldest first, the current hour last', async () => {
  request('2026-11-23T17:01:02.003Z');
  request('2026-11-23T17:24:59.999Z');
  request('2026-11-23T15:00:00.000Z');
  request('2026-11-23T15:59:59.999Z', { end: false }); // died mid-request: it still began
  request('2026-11-23T14:59:59.999Z'); // before the range
  request('2026-11-23T16:00:00.000Z', { end: false });
  request('2026-11-23T17:30:00.000Z'); // after `now` (a clock step): not in the range
  const r = await requestsPerHour(personaDir, 3, NOW);
  expect(r).toEqual([
    { hour: '2026-11-23T15:00:00Z', count: 2 },
    { hour: '2026-11-23T16:00:00Z', count: 1 },
    { hour: '2026-11-23T17:00:00Z', count: 2 },
  ]);
  // A fourth hour reaches the row at 14:59.
  expect((await requestsPerHour(personaDir, 4, NOW))[0]).toEqual({
    hour: '2026-11-23T14:00:00Z',
    count: 1,
  });
});

test('a range across midnight reads both day files; older days are not read', async () => {
  request('2026-11-22T23:10:00.000Z');
  request('2026-11-22T23:50:00.000Z');
  request('2026-11-23T00:05:00.000Z');
  // An older file that would count if it were read: unreadable (a folder), so reading it fails.
  fs.mkdirSync(path.join(personaDir, 'requests', '2026-11-21.csv'));
  const r = await requestsPerHour(personaDir, 19, NOW);
  expect(r).toHaveLength(19);
  expect(r[0]).toEqual({ hour: '2026-11-22T23:00:00Z', count: 2 });
  expect(r[1]).toEqual({ hour: '2026-11-23T00:00:00Z', count: 1 });
  expect(r.slice(2).every((h) => h.count === 0)).toBe(true);
  expect(r.at(-1)!.hour).toBe('2026-11-23T17:00:00Z');
});

test('48 hours: three day files, an end row after midnight in its start file', async () => {
  request('2026-11-21T17:30:00.000Z'); // the oldest hour of the range
  request('2026-11-21T16:59:00.000Z'); // one hour too old
  // Started 23:59:59.990 on the 22nd, ended after midnight: the end row sits in the 22nd file.
  append('2026-11-22T23:59:59.990Z', 'start', 'aaaaaaaa');
  append('2026-11-23T00:00:00.050Z', 'end', 'aaaaaaaa', undefined, '2026-11-22');
  expect(fs.existsSync(path.join(personaDir, 'requests', '2026-11-23.csv'))).toBe(false);
  const r = await requestsPerHour(personaDir, 48, NOW);
  expect(r).toHaveLength(48);
  expect(r[0]).toEqual({ hour: '2026-11-21T18:00:00Z', count: 0 });
  const byHour = Object.fromEntries(r.map((h) => [h.hour, h.count]));
  expect(byHour['2026-11-22T23:00:00Z']).toBe(1);
  expect(byHour['2026-11-23T00:00:00Z']).toBe(0);
  expect(r.reduce((a, h) => a + h.count, 0)).toBe(1);
  // 49 hours reach back to 17:00 on the 21st.
  const r49 = await requestsPerHour(personaDir, 49, NOW);
  expect(r49[0]).toEqual({ hour: '2026-11-21T17:00:00Z', count: 1 });
});

test('torn and odd lines are skipped, quoted paths with commas are read', async () => {
  request('2026-11-23T17:00:01.000Z', { path: '/api/v1/plugins/a,b/"x"' });
  // A worker that died mid-row, then the mending newline its successor writes first.
  rawAppend('2026-11-23', '2026-11-23T17:00:02.000Z,sta');
  rawAppend('2026-11-23', '\n');
  rawAppend('2026-11-23', '2026-11-23T17:00:0');
  rawAppend('2026-11-23', '\n');
  // A start row whose tail was torn off: it still began.
  rawAppend('2026-11-23', '2026-11-23T17:00:03.000Z,start,ab\n');
  // A repeated header, a blank line, a line of junk, a bad time, CRLF line ends.
  rawAppend('2026-11-23', HEADER + '\n\n;;;\nyesterday,start,aaaaaaaa,GET,ops,,/,,\n');
  rawAppend('2026-11-23', '2026-11-23T17:00:04.000Z,start,bbbbbbbb,GET,ops,x,/p,,\r\n');
  request('2026-11-23T17:00:05.000Z');
  const r = await requestsPerHour(personaDir, 1, NOW);
  expect(r).toEqual([{ hour: '2026-11-23T17:00:00Z', count: 4 }]);
});

test('no requests folder: every hour 0', async () => {
  const r = await requestsPerHour(personaDir, 3, NOW);
  expect(r.map((h) => h.count)).toEqual([0, 0, 0]);
  expect(r.map((h) => h.hour)).toEqual([
    '2026-11-23T15:00:00Z',
    '2026-11-23T16:00:00Z',
    '2026-11-23T17:00:00Z',
  ]);
});

test('now defaults to the clock', async () => {
  request(new Date().toISOString());
  const r = await requestsPerHour(personaDir, 2);
  // Both hours: the clock may pass the hour between the row and the count.
  expect(r[0]!.count + r[1]!.count).toBe(1);
  expect(Date.parse(r.at(-1)!.hour)).toBeLessThanOrEqual(Date.now());
  expect(Date.now() - Date.parse(r.at(-1)!.hour)).toBeLessThan(3_600_000);
});

test('bad ranges are refused', async () => {
  await expect(requestsPerHour(personaDir, 0, NOW)).rejects.toThrow(RangeError);
  await expect(requestsPerHour(personaDir, 1.5, NOW)).rejects.toThrow(RangeError);
  await expect(requestsPerHour(personaDir, MAX_HOURS + 1, NOW)).rejects.toThrow(RangeError);
  expect(await requestsPerHour(personaDir, MAX_HOURS, NOW)).toHaveLength(MAX_HOURS);
});
