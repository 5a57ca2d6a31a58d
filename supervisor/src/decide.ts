import fs from 'node:fs';
import { updateTriggerPath } from '@persona-browser/service-kit';
import type { Git } from './git';

/** Whether the trigger file was there; it is removed (consumed) when it was. */
export function consumeTrigger(repoRoot: string): boolean {
  try {
    fs.unlinkSync(updateTriggerPath(repoRoot));
    return true;
  } catch {
    return false;
  }
}

/** What one look at the upstream calls for. */
export type Decision =
  | { kind: 'current'; head: string }
  | { kind: 'bad'; target: string }
  | { kind: 'refuse'; reason: string; head: string; target: string | null }
  | { kind: 'update'; head: string; target: string };

const short = (hash: string): string => hash.slice(0, 12);

/** The four questions a decision asks of the checkout (the `Git` class answers them). */
export type CheckoutView = Pick<Git, 'head' | 'isAncestor' | 'localCommits' | 'dirty'>;

/**
 * Decides, from the checkout and its freshly fetched upstream commit, whether to update: never
 * over local work (uncommitted changes to tracked files, or commits the upstream lacks), never
 * to a commit that failed its gate before.
 */
export async function decide(
  git: CheckoutView,
  upstream: string,
  target: string,
  isBad: (hash: string) => boolean,
): Promise<Decision> {
  const head = await git.head();
  if (target === head) return { kind: 'current', head };
  if (await git.isAncestor(target, head)) {
    const ahead = await git.localCommits(upstream);
    return {
      kind: 'refuse',
      reason: `${ahead} local commit(s) are not on ${upstream}: push them first`,
      head,
      target: null,
    };
  }
  if (isBad(target)) return { kind: 'bad', target };
  const dirty = await git.dirty();
  if (dirty.length > 0) {
    const files = dirty.slice(0, 5).join(', ') + (dirty.length > 5 ? ', …' : '');
    return {
      kind: 'refuse',
      reason: `update to ${short(target)} refused: the checkout has uncommitted changes (${files}); commit or stash them`,
      head,
      target,
    };
  }
  const local = await git.localCommits(upstream);
  if (local > 0) {
    return {
      kind: 'refuse',
      reason: `update to ${short(target)} refused: ${local} local commit(s) are not on ${upstream}; push or drop them`,
      head,
      target,
    };
  }
  return { kind: 'update', head, target };
}
