import { errorMessage } from '@persona-browser/service-kit';
import type { Address, FolderCopy, RuntimeDriver } from '../drivers/types';
import { MoveError } from '../drivers/swarm-move';
import { pingWorker } from '../worker-client';
import { recordNode } from './node-record';
import type { PlacedFolder } from './persona-placement';

/** Starting and stopping a persona's worker from inside its queue. */
export interface WorkerOps {
  start: () => Promise<void>;
  stop: () => Promise<void>;
}

/** What a move needs of a persona (a `Persona`): its folder, its node and its worker's queue. */
export interface MovablePersona {
  readonly name: string;
  readonly node: string | null;
  readonly spec: PlacedFolder;
  runningAddress(): Address | null;
  /** Runs `work` with the worker stopped; `work` may start and stop it again. */
  whileStopped<T>(work: (ops: WorkerOps, wasRunning: boolean) => Promise<T>): Promise<T>;
}

/** A move the persona's state refuses (no cluster, same node, a node down): nothing changed. */
export class MoveRefused extends Error {}

export interface MoveResult {
  from: string;
  to: string;
  copy: FolderCopy;
}

/**
 * Moves a persona to another node of the cluster: its worker stops, its folder is copied and
 * checked whole, persona.env records the new node, the persona starts there, and the old copy
 * is removed only once the new worker answers ping. When the copy or the start fails, the
 * persona goes back to its node as it was (the new copy, if any, removed) and the error says
 * which step failed.
 */
export async function movePersona(
  persona: MovablePersona,
  driver: RuntimeDriver,
  to: string,
): Promise<MoveResult> {
  const moves = driver.moves;
  if (!moves) {
    throw new MoveRefused('moving a persona needs a cluster (WAKER_DRIVER=swarm)');
  }
  const from = persona.node;
  if (!from) {
    throw new MoveRefused(`persona ${persona.name} has no node yet: wake it once, or set NODE`);
  }
  if (from === to) throw new MoveRefused(`persona ${persona.name} is on node ${to} already`);
  for (const node of [from, to]) {
    // A fresh look where the driver has one: a node just back is not refused on an old list.
    const problem = driver.nodeProblemNow
      ? await driver.nodeProblemNow(node)
      : (driver.nodeProblem?.(node) ?? null);
    if (problem) throw new MoveRefused(`cannot move persona ${persona.name}: ${problem}`);
  }
  return persona.whileStopped(async ({ start, stop }, wasRunning) => {
    const copy = await moves.copy(persona.name, from, to).catch(async (err) => {
      if (wasRunning) await start().catch(() => undefined);
      throw err;
    });
    const place = (node: string): void => {
      persona.spec.node = node;
      recordNode(persona.spec.dir, node);
    };
    place(to);
    try {
      await start();
      const address = persona.runningAddress();
      if (!address) throw new Error(`persona ${persona.name} did not start on node ${to}`);
      await pingWorker(address);
    } catch (err) {
      // Back where it was: the old copy is whole and untouched.
      await stop().catch(() => undefined);
      place(from);
      await moves.remove(persona.name, to, from).catch(() => undefined);
      if (wasRunning) await start().catch(() => undefined);
      // The step and the node, whatever failed in it (a 502, as any failed step of a move).
      throw new MoveError('start', to, 'failed', errorMessage(err));
    }
    await moves.remove(persona.name, from, to);
    return { from, to, copy };
  });
}
