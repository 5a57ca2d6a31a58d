import fs from 'node:fs';
import path from 'node:path';

/** The columns docs/api.md gives for a request log row, in order. */
export const LOG_HEADER = 'time,event,id,method,kind,name,path,status,ms';

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

/** Every row of every day file under `<dataDir>/requests/`, oldest file first. */
export function readLogRows(dataDir: string): LogRow[] {
  const folder = path.join(dataDir, 'requests');
  if (!fs.existsSync(folder)) return [];
  const rows: LogRow[] = [];
  for (const file of fs.readdirSync(folder).sort()) {
    if (!/^\d{4}-\d{2}-\d{2}\.csv$/.test(file)) continue;
    const [header, ...records] = parseCsv(fs.readFileSync(path.join(folder, file), 'utf8'));
    if (header?.join(',') !== LOG_HEADER) {
      throw new Error(`${file} starts with ${JSON.stringify(header)}, not the documented header`);
    }
    for (const r of records) {
      const [time, event, id, method, kind, name, p, status, ms] = r;
      if (r.length !== 9) throw new Error(`${file}: row with ${r.length} fields: ${r.join(',')}`);
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
        file,
      });
    }
  }
  return rows;
}
