import type { Logger } from '@persona-browser/service-kit';
import type { LeaseEvent, LeaseTable } from '../browser/leases';
import type { Recorder, Recording } from './recorder';

/** How often standing leases are looked at, so that an expiry ends its recording soon. */
const EXPIRY_POLL_MS = 500;

export interface LeaseRecordingsOptions {
  recorder: Recorder;
  leases: LeaseTable;
  /** Why a page's pixels must not be kept (a secret on it), or null; asked at a lease's end. */
  withheld: (pageId: string) => Promise<string | null>;
  logger: Logger;
}

interface Open {
  token: string;
  recording: Recording;
}

/**
 * RECORDING_LEASES: one recording of the screen per lease, from the lease taken to its end
 * (released, expired, its page closed). The owner of the recordings under way; the lease table
 * tells it of leases taken and ended.
 */
export class LeaseRecordings {
  private readonly open = new Map<string, Open>();
  private readonly ending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly o: LeaseRecordingsOptions) {}

  start(): void {
    this.o.leases.watch((e) => this.on(e));
    this.timer = setInterval(() => {
      // Asking is what drops an expired lease (and tells `on` of its end).
      for (const pageId of [...this.open.keys()]) this.o.leases.isLeased(pageId);
    }, EXPIRY_POLL_MS);
    this.timer.unref();
  }

  private on(e: LeaseEvent): void {
    if (e.type === 'start') {
      const recording = this.o.recorder.start({ kind: 'lease', plugin: '', pageId: e.pageId });
      this.open.set(e.pageId, { token: e.token, recording });
      return;
    }
    const open = this.open.get(e.pageId);
    if (!open || open.token !== e.token) return;
    this.open.delete(e.pageId);
    const done = open.recording
      .finish(e.why, () => this.o.withheld(e.pageId))
      .catch((err: unknown) => {
        this.o.logger.error('lease recording not written', { page: e.pageId, err });
      })
      .finally(() => this.ending.delete(done));
    this.ending.add(done);
  }

  /** Ends the recordings under way (their leases end with the worker) and waits for them. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const [pageId, { token }] of [...this.open]) {
      this.on({ type: 'end', pageId, token, why: 'closed' });
    }
    await Promise.all([...this.ending]);
  }
}
