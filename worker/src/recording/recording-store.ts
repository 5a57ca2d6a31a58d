import { isRecord } from '@persona-browser/service-kit';
import type { DatedFoldersOptions } from '../store/dated-folders';
import { DatedFolders } from '../store/dated-folders';

/** The file of a recording: an animated PNG (browsers play it in an <img>). */
export const RECORDING_FILE = 'recording.png';

/**
 * How a recorded call ended (the plugin outcome counter's words), or how a recorded lease did
 * (`LeaseEnd`: released, expired, closed).
 */
export type RecordingOutcome =
  'ok' | 'failed' | 'crashed' | 'timeout' | 'refused' | 'released' | 'expired' | 'closed';

/** What was recorded: a plugin call, or a leased page from acquire to its end. */
export type RecordingKind = 'plugin' | 'lease';

/** What meta.json says of a recorded call; the store reads only these fields back. */
export interface RecordingMeta {
  id: string;
  kind: RecordingKind;
  /** The plugin called; '' for a lease. */
  plugin: string;
  page_id: string;
  /** ISO 8601, UTC: when the recording started. */
  time: string;
  duration_ms: number;
  outcome: RecordingOutcome;
  /** Frames in the file (a screen that did not change adds none), and their size. */
  frames: number;
  width: number;
  height: number;
  /** The frames a second it was taken at. */
  fps: number;
  /** Stopped early at the size cap. */
  truncated: boolean;
  /** Why there is no file (a secret on the page, the display unreadable); null: there is one. */
  missing: string | null;
}

/**
 * A recording as the list shows it: its meta's headline fields (empty where a meta.json cannot
 * be read) and the bytes of its files.
 */
export type RecordingSummary = Pick<
  RecordingMeta,
  'id' | 'kind' | 'plugin' | 'page_id' | 'time' | 'duration_ms' | 'frames' | 'missing'
> & { outcome: RecordingOutcome | ''; size: number };

const text = (v: unknown): v is string => typeof v === 'string';

function isMeta(v: unknown): v is RecordingMeta {
  if (!isRecord(v)) return false;
  return text(v.plugin) && text(v.page_id) && text(v.time) && text(v.outcome);
}

/**
 * The screen recordings of plugin calls, one folder each (`meta.json` and, unless withheld,
 * `recording.png`), kept within a size cap and an age as failure bundles are.
 */
export class RecordingStore extends DatedFolders<
  RecordingMeta,
  'meta.json' | typeof RECORDING_FILE
> {
  constructor(opts: DatedFoldersOptions) {
    super(opts, isMeta);
  }

  /** Writes a recording's meta.json and its file (none where `file` is null). */
  save(meta: RecordingMeta, file: Buffer | null): Promise<void> {
    return this.write(meta.id, {
      'meta.json': JSON.stringify(meta, null, 2),
      [RECORDING_FILE]: file ?? undefined,
    });
  }

  /** Every recording, newest first. */
  list(): RecordingSummary[] {
    return this.entries()
      .map(({ id, meta, size }): RecordingSummary => ({
        id,
        // Recordings written before leases were recorded are of plugin calls.
        kind: meta?.kind === 'lease' ? 'lease' : 'plugin',
        plugin: meta?.plugin ?? '',
        page_id: meta?.page_id ?? '',
        time: meta?.time ?? '',
        duration_ms: meta?.duration_ms ?? 0,
        outcome: meta?.outcome ?? '',
        frames: meta?.frames ?? 0,
        size,
        missing: meta?.missing ?? null,
      }))
      .reverse();
  }

  override meta(id: string): RecordingMeta | null {
    const m = super.meta(id);
    return m && { ...m, kind: m.kind === 'lease' ? 'lease' : 'plugin' };
  }

  /** The animated PNG of a recording; null for an unknown id or one without a file. */
  file(id: string): Buffer | null {
    return this.read(id, RECORDING_FILE);
  }
}
