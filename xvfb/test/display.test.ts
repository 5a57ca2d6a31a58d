import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { DisplayError, PANEL_HEIGHT, startXvfb } from '../src/display';

const alive = (pid: number): boolean => {
  try {
    return !/\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('virtual display', () => {
  test('two displays started at once get distinct free numbers, accept clients, and stop cleanly', async () => {
    const [a, b] = await Promise.all([startXvfb(), startXvfb()]);
    expect(a.display).toMatch(/^:\d+$/);
    expect(b.display).not.toBe(a.display);
    for (const d of [a, b]) {
      // Xvfb reports its number only once it accepts connections: the socket is there.
      expect(fs.existsSync(`/tmp/.X11-unix/X${d.display.slice(1)}`)).toBe(true);
      expect(alive(d.pid)).toBe(true);
    }
    await Promise.all([a.stop(), b.stop()]);
    expect(alive(a.pid)).toBe(false);
    expect(alive(b.pid)).toBe(false);
    expect(fs.existsSync(`/tmp/.X11-unix/X${a.display.slice(1)}`)).toBe(false);
  });
});

describe('a desktop with a panel', () => {
  test('the root window publishes a work area a panel shorter than the screen, and keeps it', async () => {
    const d = await startXvfb('1600x900x24');
    try {
      expect(d.workArea).toEqual({ x: 0, y: 0, width: 1600, height: 900 - PANEL_HEIGHT });
      // Read by another client after the one that set it has gone: the display kept it.
      const read = (): string =>
        execFileSync('xprop', ['-display', d.display, '-root', '_NET_WORKAREA']).toString();
      expect(read()).toMatch(new RegExp(`= 0, 0, 1600, ${900 - PANEL_HEIGHT}\\s*$`));
    } finally {
      await d.stop();
    }
  });

  test('panels at the top and the bottom: the work area starts below the top one', async () => {
    const d = await startXvfb('1280x800x24', undefined, { panels: { top: 25, bottom: 60 } });
    try {
      expect(d.workArea).toEqual({ x: 0, y: 25, width: 1280, height: 800 - 25 - 60 });
      const read = execFileSync('xprop', ['-display', d.display, '-root', '_NET_WORKAREA']);
      expect(read.toString()).toMatch(/= 0, 25, 1280, 715\s*$/);
    } finally {
      await d.stop();
    }
  });

  test('panels that leave no room are refused before Xvfb starts, naming the sizes', async () => {
    const refused = startXvfb('800x600x24', undefined, { panels: { top: 300, bottom: 300 } });
    await expect(refused).rejects.toThrow(DisplayError);
    await expect(refused).rejects.toThrow(/300 px at the top and 300 px at the bottom/);
    await expect(
      startXvfb('800x600', undefined, { panels: { top: -1, bottom: 0 } }),
    ).rejects.toThrow(/do not fit/);
  });
});

describe('tied to its parent', () => {
  test('Xvfb ends when the process that started it is killed with SIGKILL', async () => {
    // A parent of its own (the built package, as the worker uses it), for this test to kill.
    const script = `require('@persona-browser/xvfb').startXvfb()
      .then((d) => process.stdout.write(JSON.stringify(d) + '\\n'));
      setInterval(() => {}, 1e9);`;
    const parent = spawn(process.execPath, ['-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const display = await new Promise<{ pid: number; display: string }>((resolve) =>
      parent.stdout.once('data', (c: Buffer) => resolve(JSON.parse(c.toString()))),
    );
    expect(alive(display.pid)).toBe(true);
    parent.kill('SIGKILL');
    const until = Date.now() + 5_000;
    while (alive(display.pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    expect(alive(display.pid)).toBe(false);
  });
});
