import fs from 'node:fs';
import { startXvfb } from '../src/display';

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
