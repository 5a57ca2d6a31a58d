import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startVnc, startXvfb } from '@persona-browser/xvfb';
import type { VirtualDisplay } from '@persona-browser/xvfb';
import { desktopPanels } from '../identity/desktop';
import type { VncTarget } from '../live';
import type { OnDemandVnc, VncProcess } from '../live/vnc-server';
import { liveVncTarget } from '../live/vnc-server';
import type { StartupStep } from './plan';
import type { WorkerSettings } from './settings';

type Settings = Pick<WorkerSettings, 'config' | 'logger'>;

/** Where the screen's file goes: in memory where the machine has /dev/shm. */
function framebufferDir(): string {
  const base = fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
  return fs.mkdtempSync(path.join(base, 'persona-screen-'));
}

/**
 * The worker's own virtual display, unless DISPLAY names one to use. Its work area leaves the
 * panels of the desktop the persona claims (BROWSER_PLATFORM: identity/desktop.ts). With
 * recording on, Xvfb keeps the screen in a file too (`framebuffer`), which recordings read.
 */
export const displayStep: StartupStep<
  Settings,
  { display: string; xvfb: VirtualDisplay | null; framebuffer: string | null }
> = {
  name: 'display',
  async start({ config, logger }) {
    if (config.display) return { display: config.display, xvfb: null, framebuffer: null };
    const dir = config.recording ? framebufferDir() : undefined;
    const xvfb = await startXvfb(undefined, undefined, {
      framebufferDir: dir,
      panels: desktopPanels(config.browserPlatform),
    });
    logger.info('virtual display started', {
      display: xvfb.display,
      pid: xvfb.pid,
      work_area: xvfb.workArea,
    });
    return { display: xvfb.display, xvfb, framebuffer: xvfb.framebuffer };
  },
  stop: async ({ xvfb, framebuffer }) => {
    await xvfb?.stop();
    if (framebuffer) fs.rmSync(path.dirname(framebuffer), { recursive: true, force: true });
  },
};

/** x11vnc on VNC_PORT (localhost), when it is set. */
export const vncStep: StartupStep<Settings & { display: string }, { vnc: VncProcess | null }> = {
  name: 'vnc',
  start({ config, logger, display }) {
    if (!config.vncPort) return { vnc: null };
    const vnc = startVnc(display, config.vncPort);
    logger.info('vnc listening on localhost', { port: config.vncPort, display, pid: vnc.pid });
    return { vnc };
  },
  stop: ({ vnc }) => vnc?.stop(),
};

/** The live view (/vnc/) always has a VNC server on the worker's own display, while watched. */
export const liveVncStep: StartupStep<
  Settings & { display: string; xvfb: VirtualDisplay | null },
  { liveVnc: VncTarget; liveVncProcess: OnDemandVnc | null }
> = {
  name: 'live view vnc',
  async start({ config, logger, display, xvfb }) {
    const live = await liveVncTarget({
      vncPort: config.vncPort,
      ownDisplay: xvfb !== null,
      display,
      logger,
    });
    return { liveVnc: live.target, liveVncProcess: live.started };
  },
  stop: ({ liveVncProcess }) => liveVncProcess?.stop(),
};
