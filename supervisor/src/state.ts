import fs from 'node:fs';
import path from 'node:path';
import Joi from 'joi';
import type { BadCommit, UpdateRecord } from '@persona-browser/contracts';
import { badCommitSchema, updateRecordSchema } from '@persona-browser/contracts';

/** What the supervisor must remember across its own restarts. */
export interface SavedState {
  /** The last commit that passed the health gate. */
  healthy: string | null;
  bad: BadCommit[];
  /** An update under way: a supervisor started while this is set was cut short. */
  pending: { from: string; to: string; rollingBack: boolean } | null;
  lastUpdate: UpdateRecord | null;
  /** sha256 of the package-lock.json that node_modules was installed from. */
  installedLock: string | null;
  /** The waker this supervisor ran, so a successor can stop one left behind. */
  wakerPid: number | null;
}

const EMPTY: SavedState = {
  healthy: null,
  bad: [],
  pending: null,
  lastUpdate: null,
  installedLock: null,
  wakerPid: null,
};

/** What a saved file may hold: any field missing is taken from EMPTY. */
const savedSchema = Joi.object<Partial<SavedState>, true>({
  healthy: Joi.string().allow(null),
  bad: Joi.array().items(badCommitSchema),
  pending: Joi.object({
    from: Joi.string().required(),
    to: Joi.string().required(),
    rollingBack: Joi.boolean().required(),
  }).allow(null),
  lastUpdate: updateRecordSchema.allow(null),
  installedLock: Joi.string().allow(null),
  wakerPid: Joi.number().integer().allow(null),
}).unknown(true);

/** The JSON file in the state folder, written whole through a rename so a kill never tears it. */
export class StateFile {
  private readonly file: string;
  private current: SavedState;

  /** `owner`: who the folder and file belong to (the checkout's owner, when run as root). */
  constructor(
    dir: string,
    private readonly owner: { uid: number; gid: number } | null = null,
  ) {
    fs.mkdirSync(dir, { recursive: true });
    if (owner) fs.chownSync(dir, owner.uid, owner.gid);
    this.file = path.join(dir, 'state.json');
    this.current = StateFile.read(this.file);
  }

  private static read(file: string): SavedState {
    let parsed: unknown;
    try {
      parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch {
      return { ...EMPTY };
    }
    // A file this program did not write (torn, edited by hand) is not trusted in part.
    const result = savedSchema.validate(parsed);
    return result.error ? { ...EMPTY } : { ...EMPTY, ...result.value };
  }

  get(): Readonly<SavedState> {
    return this.current;
  }

  update(change: Partial<SavedState>): void {
    this.current = { ...this.current, ...change };
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(this.current, null, 2));
    if (this.owner) fs.chownSync(tmp, this.owner.uid, this.owner.gid);
    fs.renameSync(tmp, this.file);
  }
}
