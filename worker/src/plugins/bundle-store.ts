import { isRecord } from '@persona-browser/service-kit';
import type { DatedFoldersOptions } from '../store/dated-folders';
import { DatedFolders } from '../store/dated-folders';

/** The files a bundle may hold, and the type each is served with. */
export const BUNDLE_FILES = {
  'meta.json': 'application/json; charset=utf-8',
  'screenshot.png': 'image/png',
  'page.html': 'text/html; charset=utf-8',
  'network.json': 'application/json; charset=utf-8',
  'log.jsonl': 'application/x-ndjson; charset=utf-8',
} as const;
export type BundleFile = keyof typeof BUNDLE_FILES;

export const isBundleFile = (name: string): name is BundleFile =>
  Object.prototype.hasOwnProperty.call(BUNDLE_FILES, name);

/** What meta.json says of a failed call; the store reads only these fields back. */
export interface BundleMeta {
  debug_id: string;
  plugin: string;
  page_id: string;
  url: string;
  /** ISO 8601, UTC: when the call failed. */
  time: string;
  duration_ms: number;
  error: { status: number | null; message: string };
  /** Files that could not be written, and why (a hung or crashed page, a secret on screen). */
  missing: Record<string, string>;
  /** The recording of the call (GET /api/v1/recordings/{id}), when recording is on. */
  recording?: string;
}

export interface BundleSummary {
  debug_id: string;
  plugin: string;
  page_id: string;
  error: string;
  time: string;
  /** Bytes of all its files. */
  size: number;
}

export type BundleStoreOptions = DatedFoldersOptions;

const text = (v: unknown): v is string => typeof v === 'string';

/** A meta.json as `write` was given it (its fields the list shows are checked). */
function isMeta(v: unknown): v is BundleMeta {
  if (!isRecord(v) || !isRecord(v.error)) return false;
  return text(v.plugin) && text(v.page_id) && text(v.time) && text(v.error.message);
}

/**
 * The failure bundles of plugin calls, one folder each under `dir`, kept within a size cap and
 * an age. The store is the only one that writes, lists or drops them; `write` writes a bundle's
 * files whole (a reader never sees half of one), then applies retention.
 */
export class BundleStore extends DatedFolders<BundleMeta, BundleFile> {
  constructor(opts: BundleStoreOptions) {
    super(opts, isMeta);
  }

  /** Every bundle, newest first. */
  list(): BundleSummary[] {
    return this.entries()
      .map(({ id, meta, size }) => ({
        debug_id: id,
        plugin: meta?.plugin ?? '',
        page_id: meta?.page_id ?? '',
        error: meta?.error.message ?? '',
        time: meta?.time ?? '',
        size,
      }))
      .reverse();
  }

  /** A file of a bundle and its type, or null for an unknown id or file name. */
  file(id: string, name: string): { bytes: Buffer; contentType: string } | null {
    if (!isBundleFile(name)) return null;
    const bytes = this.read(id, name);
    return bytes && { bytes, contentType: BUNDLE_FILES[name] };
  }
}
