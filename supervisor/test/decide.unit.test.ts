import crypto from 'node:crypto';
import type { CheckoutView, Decision } from '../src/decide';
import { decide } from '../src/decide';

/**
 * Each decision one look at the upstream can lead to, against a checkout held in memory: a
 * history of commits, a HEAD, the upstream's ref and the tracked files changed. Its answers are
 * worked out from that history as git works them out, so each case below is a situation, not a
 * canned answer. (Git itself runs for real in the supervisor's integration tests.)
 */

const UPSTREAM = 'origin/main';

class MemoryCheckout implements CheckoutView {
  private readonly parents = new Map<string, string[]>();
  private readonly refs = new Map<string, string>();
  private at: string;
  changed: string[] = [];

  constructor() {
    this.at = this.commit('initial', []);
    this.refs.set(UPSTREAM, this.at);
  }

  /** A new commit on `parents` (HEAD by default); its hash, 40 hex digits as git's are. */
  commit(subject: string, parents: string[] = [this.at]): string {
    const hash = crypto.createHash('sha1').update(`${subject}\0${parents.join()}`).digest('hex');
    this.parents.set(hash, parents);
    return hash;
  }

  /** Commits on HEAD, which moves to each. */
  commitOnHead(...subjects: string[]): string {
    for (const s of subjects) this.at = this.commit(s);
    return this.at;
  }

  /** Commits on the upstream (as a push elsewhere does); its new commit. */
  push(...subjects: string[]): string {
    let tip = this.upstreamTip();
    for (const s of subjects) tip = this.commit(s, [tip]);
    this.refs.set(UPSTREAM, tip);
    return tip;
  }

  /** Moves HEAD to `hash`, as an update does. */
  moveTo(hash: string): void {
    this.history(hash);
    this.at = hash;
  }

  /** Sets the upstream to `hash`, as a force-push does. */
  forcePush(hash: string): void {
    this.refs.set(UPSTREAM, hash);
  }

  upstreamTip(): string {
    const tip = this.refs.get(UPSTREAM);
    if (!tip) throw new Error(`no ref ${UPSTREAM}`);
    return tip;
  }

  /** `hash` and every commit it descends from. */
  private history(hash: string): Set<string> {
    const seen = new Set<string>();
    const todo = [hash];
    for (let h = todo.pop(); h !== undefined; h = todo.pop()) {
      if (seen.has(h)) continue;
      const parents = this.parents.get(h);
      if (!parents) throw new Error(`no commit ${h}`);
      seen.add(h);
      todo.push(...parents);
    }
    return seen;
  }

  async head(): Promise<string> {
    return this.at;
  }

  async isAncestor(older: string, newer: string): Promise<boolean> {
    return this.history(newer).has(older);
  }

  async localCommits(upstream: string): Promise<number> {
    const tip = this.refs.get(upstream);
    if (!tip) throw new Error(`no ref ${upstream}`);
    const theirs = this.history(tip);
    return [...this.history(this.at)].filter((h) => !theirs.has(h)).length;
  }

  async dirty(): Promise<string[]> {
    return [...this.changed];
  }
}

const short = (hash: string): string => hash.slice(0, 12);

/** What the supervisor decides after fetching, with `bad` the commits that failed their gate. */
function look(c: MemoryCheckout, bad: string[] = []): Promise<Decision> {
  return decide(c, UPSTREAM, c.upstreamTip(), (hash) => bad.includes(hash));
}

describe('decide: one look at the upstream', () => {
  test('on the upstream commit already: current, even with uncommitted changes', async () => {
    const c = new MemoryCheckout();
    const head = c.commitOnHead('a');
    c.forcePush(head);
    c.changed = ['README.md'];
    expect(await look(c)).toEqual({ kind: 'current', head });
  });

  test('the upstream moved ahead of a clean checkout: update from HEAD to its commit', async () => {
    const c = new MemoryCheckout();
    const head = await c.head();
    const target = c.push('one', 'two');
    expect(await look(c)).toEqual({ kind: 'update', head, target });
  });

  test('a commit that failed its gate before is not tried again; a newer one is', async () => {
    const c = new MemoryCheckout();
    const head = await c.head();
    const failed = c.push('breaks the worker');
    expect(await look(c, [failed])).toEqual({ kind: 'bad', target: failed });
    const fixed = c.push('fixes it');
    expect(await look(c, [failed])).toEqual({ kind: 'update', head, target: fixed });
  });

  test('a bad upstream commit over uncommitted changes: bad, not a refusal about the changes', async () => {
    const c = new MemoryCheckout();
    const failed = c.push('breaks the worker');
    c.changed = ['README.md'];
    expect(await look(c, [failed])).toEqual({ kind: 'bad', target: failed });
  });

  test('the checkout ahead of the upstream: refused, nothing to update to, push first', async () => {
    const c = new MemoryCheckout();
    const head = c.commitOnHead('made on the server', 'and another');
    // A bad upstream commit changes nothing: the local commits are what stands in the way.
    expect(await look(c, [c.upstreamTip()])).toEqual({
      kind: 'refuse',
      reason: `2 local commit(s) are not on ${UPSTREAM}: push them first`,
      head,
      target: null,
    });
  });

  test('uncommitted changes to tracked files: refused, naming them', async () => {
    const c = new MemoryCheckout();
    const head = await c.head();
    const target = c.push('new');
    c.changed = ['README.md', 'worker/src/main.ts'];
    expect(await look(c)).toEqual({
      kind: 'refuse',
      reason: `update to ${short(target)} refused: the checkout has uncommitted changes (README.md, worker/src/main.ts); commit or stash them`,
      head,
      target,
    });
  });

  test('many changed files: the first five are named, then an ellipsis', async () => {
    const c = new MemoryCheckout();
    const target = c.push('new');
    c.changed = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const d = await look(c);
    expect(d).toMatchObject({ kind: 'refuse', target });
    expect(d.kind === 'refuse' && d.reason).toContain('(a, b, c, d, e, …)');
  });

  test('local commits beside a newer upstream (diverged): refused, counting them', async () => {
    const c = new MemoryCheckout();
    const head = c.commitOnHead('made on the server');
    const target = c.push('pushed elsewhere');
    expect(await look(c)).toEqual({
      kind: 'refuse',
      reason: `update to ${short(target)} refused: 1 local commit(s) are not on ${UPSTREAM}; push or drop them`,
      head,
      target,
    });
  });

  test('diverged and with uncommitted changes: the changes are named first', async () => {
    const c = new MemoryCheckout();
    c.commitOnHead('made on the server');
    c.push('pushed elsewhere');
    c.changed = ['README.md'];
    const d = await look(c);
    expect(d.kind === 'refuse' && d.reason).toMatch(/uncommitted changes \(README\.md\)/);
  });

  test('an upstream rewritten under the checkout: the commits it dropped count as local', async () => {
    const c = new MemoryCheckout();
    const base = await c.head();
    const updated = c.push('pushed', 'then taken back');
    c.moveTo(updated);
    const target = c.commit('rewritten', [base]);
    c.forcePush(target);
    expect(await look(c)).toEqual({
      kind: 'refuse',
      reason: `update to ${short(target)} refused: 2 local commit(s) are not on ${UPSTREAM}; push or drop them`,
      head: updated,
      target,
    });
  });
});
