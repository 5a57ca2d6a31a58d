/** What a guest of the browser (guest-mux.ts) may touch, and what it is refused. */

/** A guest's view of the pool: the page it may have besides its own, by target id. */
export interface GuestPolicy {
  /** Whether the guest may have `targetId`, a target it did not create, right now. */
  holds(targetId: string): boolean;
  /**
   * A use of `targetId`, a target the guest did not create, by a command: null when the guest
   * holds it (the hold is renewed: a lease lasts from its last use), else the reason it reads.
   */
  use(targetId: string): string | null;
  /**
   * Sent on each page and frame session the guest attaches, before the guest hears of it (the
   * target waits for its debugger until then): what makes its pages tell the persona's identity.
   */
  pageSetup: GuestCommand[];
  /**
   * Whether the guest's `Runtime.enable` is kept from its pages and frames, their execution
   * contexts told to it instead (quiet-contexts.ts): DEVTOOLS_QUIET_RUNTIME.
   */
  quietRuntime: boolean;
}

/** A command the mux sends on a guest's session for it. */
export interface GuestCommand {
  method: string;
  params: Record<string, unknown>;
}

/** Browser-level commands that name a target in `params.targetId`. */
export const NAMES_TARGET = new Set([
  'Target.attachToTarget',
  'Target.closeTarget',
  'Target.activateTarget',
  'Target.exposeDevToolsProtocol',
  'Target.getTargetInfo',
]);
/** Browser-level commands a guest may not send at all, with the reason it reads. */
export const REFUSED: Record<string, string> = {
  'Browser.close': "the persona's browser is closed by its worker only",
  'Browser.crash': "the persona's browser is closed by its worker only",
  'Browser.crashGpuProcess': "the persona's browser is closed by its worker only",
  'Target.attachToBrowserTarget': 'a connection has one browser session',
  'Target.sendMessageToTarget': 'only flattened sessions are served (flatten: true)',
  'Target.setRemoteLocations': 'not served',
};
