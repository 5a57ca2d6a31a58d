import type { Logger } from '@persona-browser/service-kit';
import { errorMessage } from '@persona-browser/service-kit';

/** A persona's copy on a node that must go, the one on `keptOn` staying. */
interface Stray {
  persona: string;
  node: string;
  keptOn: string;
  /** The removal under way, joined by whoever asks for it meanwhile. */
  removing: Promise<void> | null;
}

/**
 * Persona folders a move could not remove because their node was down: the new copy of a move
 * whose start failed there, or the old copy of a move that finished. Removed once the node is
 * back, and before a copy of that persona to that node: a move's receiver never overwrites a
 * folder, so a copy left behind would refuse every later move there. Kept in memory: after a
 * restart of the waker such a folder stays (a move there is then refused, 409, naming it).
 */
export class StrayCopies {
  private readonly strays = new Map<string, Stray>();

  constructor(
    /** Removes the copy on `node` (the move's own removal, which checks both nodes). */
    private readonly remove: (persona: string, node: string, keptOn: string) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  add(persona: string, node: string, keptOn: string): void {
    this.strays.set(`${persona}@${node}`, { persona, node, keptOn, removing: null });
    this.logger.warn(`the copy of ${persona} on node ${node} is removed once that node is back`);
  }

  /** The persona runs on `node` now (its NODE set by hand): its folder there is no stray. */
  forget(persona: string, node: string): void {
    this.strays.delete(`${persona}@${node}`);
  }

  /** Removes one persona's stray on `node`, if it has one; a failure keeps it for later. */
  removeOn(node: string, persona: string): Promise<void> {
    const stray = this.strays.get(`${persona}@${node}`);
    return stray ? this.removeOne(stray) : Promise.resolve();
  }

  /** Removes every stray whose two nodes are ready now (a node came back). */
  async removeReady(ready: (node: string) => boolean): Promise<void> {
    const due = [...this.strays.values()].filter((s) => ready(s.node) && ready(s.keptOn));
    await Promise.all(due.map((s) => this.removeOne(s)));
  }

  private removeOne(stray: Stray): Promise<void> {
    if (stray.removing) return stray.removing;
    const key = `${stray.persona}@${stray.node}`;
    const removing = this.remove(stray.persona, stray.node, stray.keptOn).then(
      () => {
        this.strays.delete(key);
        this.logger.info(`removed the copy of ${stray.persona} left on node ${stray.node}`);
      },
      (err: unknown) => {
        stray.removing = null;
        this.logger.warn(`the copy of ${stray.persona} on node ${stray.node} is still there`, {
          error: errorMessage(err),
        });
      },
    );
    stray.removing = removing;
    return removing;
  }
}
