/**
 * What the folder pipe's one-shot tasks (main.ts, run on a Swarm node) and the waker that starts
 * them agree on: the modes, the environment a task reads, its exit codes and the one result line
 * it prints on stdout, which the waker reads back from the task's logs.
 */
import { isRecord } from '@persona-browser/service-kit';

export type PipeMode = 'receive' | 'send' | 'commit' | 'remove' | 'make';

/** Where a task sees the node's data folder (a bind mount of it). */
export const DATA_MOUNT = '/data';
/** The receiver's TCP port on the overlay (each task has an address of its own). */
export const PIPE_PORT = 7171;
/** The script's path in the persona image. */
export const PIPE_SCRIPT = '/app/waker/dist/folder-pipe/main.js';

/** The environment of a task: names of folders in the data folder, never paths. */
export interface PipeEnv {
  /** The persona's folder name. */
  PIPE_PERSONA: string;
  /** The receiver's folder for what arrives (`<persona>.incoming-<id>`). */
  PIPE_INCOMING?: string;
  /** The sender's peer: the receiver's service name on the overlay. */
  PIPE_PEER?: string;
  /** A secret the sender sends first; the receiver drops a connection without it. */
  PIPE_TOKEN?: string;
  /** How long the receiver waits for its sender, and the sender for its receiver. */
  PIPE_WAIT_MS?: string;
  /** The receiver's port, when not PIPE_PORT. */
  PIPE_PORT?: string;
  /** `remove`: the folder to remove. */
  PIPE_TARGET?: string;
}

/** The task failed: see its stderr. */
export const EXIT_FAILED = 1;
/** The receiving node already has a folder of the persona's name: nothing was written. */
export const EXIT_EXISTS = 3;

/** What the stream and the folder held, as each end counts them. */
export interface PipeCounts {
  /** Bytes of the tar stream. */
  bytes: number;
  /** sha256 of the tar stream, hex. */
  sha256: string;
  /** Everything under the folder: files, folders, links… */
  entries: number;
  /** Regular files, and the sum of their sizes. */
  files: number;
  fileBytes: number;
}

export interface RemoveResult {
  existed: boolean;
}

export const RESULT_PREFIX = 'FOLDER_PIPE_RESULT ';

/** A name of one folder directly in the data folder: no separator, not `.` or `..`. */
export function isFolderName(name: string): boolean {
  return /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name) && name.length <= 200;
}

/** The last result line of a task's output, parsed; null when there is none. */
export function resultOf(output: string): Record<string, unknown> | null {
  const line = output
    .split('\n')
    .filter((l) => l.startsWith(RESULT_PREFIX))
    .pop();
  if (!line) return null;
  try {
    const parsed: unknown = JSON.parse(line.slice(RESULT_PREFIX.length));
    return isRecord(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** The counts in a result, when every one is there with its type. */
export function countsOf(result: Record<string, unknown> | null): PipeCounts | null {
  if (!result) return null;
  const { bytes, sha256, entries, files, fileBytes } = result;
  if (typeof sha256 !== 'string') return null;
  if (typeof bytes !== 'number' || typeof entries !== 'number') return null;
  if (typeof files !== 'number' || typeof fileBytes !== 'number') return null;
  return { bytes, sha256, entries, files, fileBytes };
}
