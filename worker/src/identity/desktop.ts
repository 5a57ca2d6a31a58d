/**
 * The desktop a persona's screen shows: the panels of the system it claims (`BROWSER_PLATFORM`,
 * else the machine's own, Linux) and its browser window maximised on what they leave. The
 * display step gives the panels to Xvfb (`_NET_WORKAREA`), so `screen.availTop`/`availHeight`
 * come from the display itself; the launch places the window on the work area.
 */
import type { Panels, WorkArea } from '@persona-browser/xvfb';
import type { PlatformName } from './platform';

/** The screen every persona's display has (Xvfb's default, `@persona-browser/xvfb` SCREEN). */
export const SCREEN_SIZE = { width: 1920, height: 1080 };

export const DESKTOP_PANELS: Record<PlatformName, Panels> = {
  // Windows 11 at 100 % scale: its taskbar is 48 px at the bottom. Chrome maximised on a
  // 1920x1080 screen reads availHeight 1032 and outerHeight 1032 at screenX/screenY 0 in public
  // captures of real browsers (GitHub code search: "outerHeight: 1032").
  windows: { top: 0, bottom: 48 },
  // macOS on a screen without a notch: the menu bar is 25 px (availTop 25 in captures of real
  // Chrome, e.g. 1920x1080 → availHeight 1055 with the Dock hidden) and the Dock, shown at the
  // bottom, takes 60 px more (a capture of a 5120x1440 screen: availHeight 1355 = 1440 - 25 - 60).
  macos: { top: 25, bottom: 60 },
  // Linux Mint's Cinnamon desktop: one 40 px panel at the bottom (its default since Mint 20).
  linux: { top: 0, bottom: 40 },
};

/** The panels of the desktop a persona shows: its claimed system's, else the machine's (Linux). */
export const desktopPanels = (platform: PlatformName | null): Panels =>
  DESKTOP_PANELS[platform ?? 'linux'];

/** The work area of a screen of SCREEN_SIZE with those panels (where no display reported one). */
export function workAreaFor(panels: Panels): WorkArea {
  return {
    x: 0,
    y: panels.top,
    width: SCREEN_SIZE.width,
    height: SCREEN_SIZE.height - panels.top - panels.bottom,
  };
}
