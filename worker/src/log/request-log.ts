import fs from 'node:fs';
import path from 'node:path';
import { errnoCode } from '@persona-browser/service-kit';

export const RETENTION_DAYS = 50;
/**
 * The columns, in order. `credential` and `label` came later, at the end: a reader that takes
 * fields by position reads older files (without them) and newer ones alike, and a day file an
 * older worker began keeps its header while the rows a newer one adds carry the two more.
 */
export const COLUMNS = [
  'time',
  'event',
  'id',
  'method',
  'kind',
  'name',
  'path',
  'status',
  'ms',
  'credential',
  'label',
];

export interface RequestRow {
  id: string;
  method: string;
  kind: string;
  name: string;
  path: string;
  /** Who made the call: `key`, a token's id, or empty when it carried no credential taken. */
  credential: string;
  /** The token's label (a note for people), else empty. */
  label: string;
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * A label as the log holds it: a line break or another control character becomes a space, so
 * every row stays one line (the request counts read the files line by line, and a label must not
 * be able to write a row of its own).
 */
// eslint-disable-next-line no-control-regex
const oneLine = (text: string): string => text.replace(/[\u0000-\u001f\u007f]/g, ' ');

const dayOf = (d: Date): string => d.toISOString().slice(0, 10);

/** An open day file: its descriptor and the file it was opened on, to notice a replacement. */
interface OpenFile {
  fd: number;
  dev: number;
  ino: number;
}

/**
 * The request log: one CSV per UTC day under `<dir>/requests/`. Each row is one `write(2)` on an
 * O_APPEND descriptor, so a crash leaves whole rows only; a file that lost its tail to a power
 * cut is mended with a newline before its next row. Day files stay open between rows; a file
 * that a person removed, moved or emptied is noticed at the next row, which starts it again.
 */
export class RequestLog {
  private readonly folder: string;
  private readonly fileOfId = new Map<string, string>();
  private readonly open = new Map<string, OpenFile>();
  private lastRetentionDay: string | null = null;

  constructor(
    dataDir: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.folder = path.join(dataDir, 'requests');
  }

  start(row: RequestRow): void {
    const at = this.now();
    const file = path.join(this.folder, `${dayOf(at)}.csv`);
    this.fileOfId.set(row.id, file);
    this.append(file, at, 'start', row, '', '');
  }

  /** `status` null when the worker stops mid-request. The row goes to its start's file. */
  end(row: RequestRow, status: number | null, ms: number): void {
    const at = this.now();
    const file = this.fileOfId.get(row.id) ?? path.join(this.folder, `${dayOf(at)}.csv`);
    this.fileOfId.delete(row.id);
    this.append(
      file,
      at,
      'end',
      row,
      status === null ? '' : String(status),
      String(Math.round(ms)),
    );
    this.closePast(at);
  }

  /** Closes every day file; a later row opens its file again. */
  close(): void {
    for (const { fd } of this.open.values()) fs.closeSync(fd);
    this.open.clear();
  }

  private append(
    file: string,
    at: Date,
    event: string,
    row: RequestRow,
    status: string,
    ms: string,
  ): void {
    this.applyRetention(at);
    const line =
      [
        at.toISOString(),
        event,
        row.id,
        row.method,
        row.kind,
        row.name,
        row.path,
        status,
        ms,
        row.credential,
        oneLine(row.label),
      ]
        .map(csvField)
        .join(',') + '\n';
    const current = this.open.get(file);
    // Only the file at the path is the log: one deleted, moved or emptied by hand starts again.
    const onDisk = fs.statSync(file, { throwIfNoEntry: false });
    if (current && onDisk && onDisk.ino === current.ino && onDisk.dev === current.dev) {
      fs.writeSync(current.fd, onDisk.size === 0 ? COLUMNS.join(',') + '\n' + line : line);
      return;
    }
    if (current) this.forget(file, current);
    const opened = this.openFile(file);
    fs.writeSync(opened.fd, this.prefixFor(opened.fd) + line);
  }

  private openFile(file: string): OpenFile {
    let fd: number;
    try {
      fd = fs.openSync(file, 'a+', 0o644);
    } catch (err) {
      // The folder was removed while the worker runs (a manual clean-up): make it again.
      if (errnoCode(err) !== 'ENOENT') throw err;
      fs.mkdirSync(this.folder, { recursive: true });
      fd = fs.openSync(file, 'a+', 0o644);
    }
    const { dev, ino } = fs.fstatSync(fd);
    const opened = { fd, dev, ino };
    this.open.set(file, opened);
    this.closePast(this.now());
    return opened;
  }

  private forget(file: string, current: OpenFile): void {
    this.open.delete(file);
    fs.closeSync(current.fd);
  }

  /** A past day's file is closed once no request that started in it still has to end. */
  private closePast(at: Date): void {
    const today = path.join(this.folder, `${dayOf(at)}.csv`);
    const awaited = new Set(this.fileOfId.values());
    for (const [file, current] of this.open) {
      if (file !== today && !awaited.has(file)) this.forget(file, current);
    }
  }

  /**
   * Checked when a file is opened, so a new file starts with its header: the header for an
   * empty file, or a newline when an earlier writer died mid-row.
   */
  private prefixFor(fd: number): string {
    const size = fs.fstatSync(fd).size;
    if (size === 0) return COLUMNS.join(',') + '\n';
    const last = Buffer.alloc(1);
    fs.readSync(fd, last, 0, 1, size - 1);
    return last.toString() === '\n' ? '' : '\n';
  }

  /** The first write of each UTC day deletes day files older than RETENTION_DAYS. */
  private applyRetention(at: Date): void {
    const today = dayOf(at);
    if (this.lastRetentionDay === today) return;
    fs.mkdirSync(this.folder, { recursive: true });
    this.lastRetentionDay = today;
    const cutoff = dayOf(new Date(Date.parse(today) - RETENTION_DAYS * 86_400_000));
    for (const name of fs.readdirSync(this.folder)) {
      const day = /^(\d{4}-\d{2}-\d{2})\.csv$/.exec(name)?.[1];
      if (day !== undefined && day < cutoff)
        fs.rmSync(path.join(this.folder, name), { force: true });
    }
  }
}
