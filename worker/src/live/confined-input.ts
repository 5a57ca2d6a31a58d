/**
 * What a viewer confined to one page (a live-view link limited to it) may not send to the
 * display, which shows the browser's whole window: presses on the browser's own bars above the
 * page (the tab strip, the toolbar, the app menu), and the browser's shortcuts that switch, open
 * or close tabs and windows or reach what lists them. Typing, clicking and scrolling in the page
 * pass as before. live/confine.ts keeps the page in front whatever gets through.
 */

/** X keysyms (X11's keysymdef.h) the rules name. */
const XK = {
  Tab: 0xff09,
  ISO_Left_Tab: 0xfe20,
  Escape: 0xff1b,
  Delete: 0xffff,
  Page_Up: 0xff55,
  Page_Down: 0xff56,
  KP_Page_Up: 0xff9a,
  KP_Page_Down: 0xff9b,
  KP_1: 0xffb1,
  KP_9: 0xffb9,
  F1: 0xffbe,
  F4: 0xffc1,
  F6: 0xffc3,
  F10: 0xffc7,
  F11: 0xffc8,
  F12: 0xffc9,
} as const;

const SHIFT = new Set([0xffe1, 0xffe2]);
const CONTROL = new Set([0xffe3, 0xffe4]);
/** Alt and Meta (noVNC sends Alt; some keyboards map Alt to Meta). */
const ALT = new Set([0xffe9, 0xffea, 0xffe7, 0xffe8]);

export interface Modifiers {
  ctrl: boolean;
  alt: boolean;
  shift: boolean;
}

/** Ctrl (any Shift): new tab, new window, close tab, quit, history, downloads, page source. */
const CTRL_LETTERS = 'tnwqhju';
/** Ctrl+Shift: bookmarks manager, tab search, bookmarks bar, profiles, DevTools (i, j, c). */
const CTRL_SHIFT_LETTERS = 'oabmijc';
/** Alt (no Ctrl): the app menu (f, e). */
const ALT_LETTERS = 'fe';
/** Alt+Shift: the toolbar's focus (t), the feedback window (i). */
const ALT_SHIFT_LETTERS = 'ti';
/** With any modifiers: help (a new tab), pane focus, app menu, fullscreen, DevTools. */
const ALWAYS = new Set<number>([XK.F1, XK.F6, XK.F10, XK.F11, XK.F12]);
const TAB_CYCLE = new Set<number>([
  XK.Tab,
  XK.ISO_Left_Tab,
  XK.Page_Up,
  XK.Page_Down,
  XK.KP_Page_Up,
  XK.KP_Page_Down,
]);

/** The lowercase letter a keysym types (Latin-1 letters are their own keysyms), else null. */
function letterOf(keysym: number): string | null {
  const c = keysym >= 0x41 && keysym <= 0x5a ? keysym + 0x20 : keysym;
  return c >= 0x61 && c <= 0x7a ? String.fromCharCode(c) : null;
}

/** A digit 1–9, on the main row or the keypad: Ctrl or Alt with one picks the tab. */
const isTabDigit = (keysym: number): boolean =>
  (keysym >= 0x31 && keysym <= 0x39) || (keysym >= XK.KP_1 && keysym <= XK.KP_9);

/**
 * Whether pressing `keysym` with these modifiers is one of Chromium's own shortcuts on Linux
 * that a confined viewer must not reach (most of them the page under it cannot keep from the
 * browser either).
 */
export function isBrowserShortcut(keysym: number, m: Modifiers): boolean {
  if (ALWAYS.has(keysym)) return true;
  const letter = letterOf(keysym);
  if (m.ctrl) {
    if (TAB_CYCLE.has(keysym) || keysym === XK.F4 || isTabDigit(keysym)) return true;
    if (letter !== null && CTRL_LETTERS.includes(letter)) return true;
    if (m.shift && letter !== null && CTRL_SHIFT_LETTERS.includes(letter)) return true;
    // Ctrl+Shift+Delete: the clearing of browsing data, in a new tab.
    return m.shift && keysym === XK.Delete;
  }
  if (m.alt) {
    if (keysym === XK.F4 || isTabDigit(keysym)) return true;
    if (letter !== null && ALT_LETTERS.includes(letter)) return true;
    return m.shift && letter !== null && ALT_SHIFT_LETTERS.includes(letter);
  }
  // Shift+Escape: the task manager, which ends any tab's process.
  return m.shift && keysym === XK.Escape;
}

/**
 * One viewer's keys and buttons as the display has them, to drop what a confined viewer may
 * not do. Every key event of the viewer passes through `key`, forwarded or not, so the modifiers
 * it holds are known whenever control begins.
 */
export class ConfinedInput {
  private readonly held = new Set<number>();
  /** Keys whose press was dropped: their release is dropped too. */
  private readonly swallowed = new Set<number>();
  /** The buttons the display holds pressed, as last forwarded. */
  private buttons = 0;

  /** Whether this key event may go on; `confined`: the viewer drives a page-limited control. */
  key(keysym: number, down: boolean, confined: boolean): boolean {
    const id = letterOf(keysym)?.charCodeAt(0) ?? keysym;
    if (SHIFT.has(keysym) || CONTROL.has(keysym) || ALT.has(keysym)) {
      if (down) this.held.add(keysym);
      else this.held.delete(keysym);
      return true;
    }
    if (!down) return !this.swallowed.delete(id);
    if (confined && isBrowserShortcut(keysym, this.modifiers())) {
      this.swallowed.add(id);
      return false;
    }
    return true;
  }

  /**
   * The button mask to forward for a pointer event at screen row `y`: buttons newly pressed
   * above `contentTop` (the browser's bars; null: not confined) are left out, so they never
   * press there; releases and moves pass.
   */
  pointer(mask: number, y: number, contentTop: number | null): number {
    const pressed = mask & ~this.buttons;
    const out = contentTop !== null && y < contentTop ? mask & ~pressed : mask;
    this.buttons = out;
    return out;
  }

  private modifiers(): Modifiers {
    const any = (set: Set<number>): boolean => [...set].some((k) => this.held.has(k));
    return { ctrl: any(CONTROL), alt: any(ALT), shift: any(SHIFT) };
  }
}
