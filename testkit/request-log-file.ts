import fs from 'node:fs';
import path from 'node:path';

/** The columns docs/api.md gives for a request log row, in order. */
export const LOG_HEADER = 'time,event,id,method,kind,name,path,status,ms,credential,label';
/** The header of files written before `credential` and `label` were added. */
export const OLD_LOG_HEADER = 'time,event,id,method,kind,name,path,status,ms';
const FIELDS = LOG_HEADER.split(',').length;
const OLD_FIELDS = OLD_LOG_HEADER.split(',').length;

export interface LogRow {
  time: string;
  event: string;
  id: string;
  method: string;
  kind: string;
  name: string;
  path: string;
  status: string;
  ms: string;
  /** `key`, a token's id, or empty (also for rows written before the column). */
  credential: string;
  /** The token's label, or empty. */
  label: string;
  /** The file the row was read from (`YYYY-MM-DD.csv`). */
  file: string;
}

/** RFC 4180 records: quoted fields may hold commas, doubled quotes and line breaks. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || record.length) {
    record.push(field);
    records.push(record);
  }
  return records;
}

/**
 * Every row of every day file under `<dataDir>/requests/`, oldest file first. A file an older
 * worker began has the old header, its rows 9 fields, and the rows a newer worker appended to it
 * 11; a file with the current header has 11 in every row.
 */
export function readLogRows(dataDir: string): LogRow[] {
  const folder = path.join(dataDir, 'requests');
  if (!fs.existsSync(folder)) return [];
  const rows: LogRow[] = [];
  for (const file of fs.readdirSync(folder).sort()) {
    if (!/^\d{4}-\d{2}-\d{2}\.csv$/.test(file)) continue;
    const [header, ...records] = parseCsv(fs.readFileSync(path.join(folder, file), 'utf8'));
    const old = header?.join(',') === OLD_LOG_HEADER;
    if (!old && header?.join(',') !== LOG_HEADER) {
      throw new Error(`${file} starts with ${JSON.stringify(header)}, not the documented header`);
    }
    for (const r of records) {
      const [time, event, id, method, kind, name, p, status, ms, credential, label] = r;
      if (r.length !== FIELDS && !(old && r.length === OLD_FIELDS))
        throw new Error(`${file}: row with ${r.length} fields: ${r.join(',')}`);
      rows.push({
        time: time as string,
        event: event as string,
        id: id as string,
        method: method as string,
        kind: kind as string,
        name: name as string,
        path: p as string,
        status: status as string,
        ms: ms as string,
        credential: credential ?? '',
        label: label ?? '',
        file,
      });
    }
  }
  return rows;
}
