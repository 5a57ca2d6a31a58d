import type { ManagedPage } from '../browser/managed-page';
import type { Authenticator } from '../http/auth';
import type { LiveControl } from './control';

/** The live-view link of an ask: a `live` token limited to the asked page. */
export interface AskLink {
  token: string;
  tokenId: string;
  /** Epoch seconds: the ask's own end (its timeout), after which the token is refused anyway. */
  exp: number;
}

/**
 * One standing `ask-person`: the page waits for the person at the live view to take it over
 * and hand it back, until its timeout. Its link is a token this worker made, revoked the moment
 * the ask ends, so the person's session (and its control) ends with it.
 */
export class StandingAsk {
  readonly started = Date.now();
  /** True once the person has taken the page over and handed it back; false at the timeout. */
  readonly outcome: Promise<boolean>;
  private settle: (handedBack: boolean) => void = () => undefined;
  private ended = false;
  private taken = false;
  private readonly timer: NodeJS.Timeout;
  private readonly unwatch: () => void;

  constructor(
    readonly page: ManagedPage,
    readonly message: string,
    readonly timeoutS: number,
    readonly link: AskLink | null,
    private readonly control: LiveControl,
    private readonly onEnd: (ask: StandingAsk) => void,
  ) {
    this.outcome = new Promise<boolean>((resolve) => {
      this.settle = resolve;
    });
    page.awaitingPerson = message;
    this.timer = setTimeout(() => this.end(false), timeoutS * 1000);
    this.unwatch = control.watch(() => this.check());
    this.check();
  }

  get active(): boolean {
    return !this.ended;
  }

  /** Ends the ask (once): the page no longer waits, the link is revoked, the waiters answered. */
  end(handedBack: boolean): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    this.unwatch();
    // Only what this ask set: a plugin's own wait for the person may have begun since.
    if (this.page.awaitingPerson === this.message) this.page.awaitingPerson = null;
    this.settle(handedBack);
    this.onEnd(this);
  }

  /** Taken over by a person, then no longer held by them: handed back (or moved elsewhere). */
  private check(): void {
    const held = this.control.current();
    if (held?.pageId === this.page.id) this.taken = true;
    else if (this.taken) this.end(true);
  }
}

/**
 * The standing asks of the worker, one per page at most: `ask-person` with `wait: false`
 * answers at once with the link while its ask stands; a later call with `wait: true` joins it.
 */
export class PersonAsks {
  private readonly byPage = new Map<string, StandingAsk>();

  constructor(
    private readonly control: LiveControl,
    private readonly auth: Authenticator,
  ) {}

  /** The ask standing on this page (this very tab, not an earlier one of the same id). */
  of(page: ManagedPage): StandingAsk | null {
    const ask = this.byPage.get(page.id);
    return ask && ask.active && ask.page === page ? ask : null;
  }

  /** Starts an ask on the page, with a one-page `live` link that ends with it. */
  begin(page: ManagedPage, message: string, timeoutS: number): StandingAsk {
    const exp = Math.ceil(Date.now() / 1000 + timeoutS);
    const minted = this.auth.mint({ scope: 'live', page_id: page.id, label: 'ask-person', exp });
    const link = minted ? { token: minted.token, tokenId: minted.claims.id, exp } : null;
    const ask = new StandingAsk(page, message, timeoutS, link, this.control, (ended) => {
      if (this.byPage.get(page.id) === ended) this.byPage.delete(page.id);
      if (ended.link) this.auth.revocations.revoke(ended.link.tokenId, ended.link.exp);
    });
    this.byPage.set(page.id, ask);
    return ask;
  }

  /** Ends every ask (the worker stops): their links are revoked, their callers answered. */
  close(): void {
    for (const ask of [...this.byPage.values()]) ask.end(false);
  }
}
