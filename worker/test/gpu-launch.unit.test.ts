/**
 * The browser's switches for drawing in software (the default) and on the machine's GPU
 * (GPU=dri), and the render node check that decides between them. The test machine has no GPU:
 * hardware GL itself cannot be shown here, only that its switches go out and that a missing
 * render node falls back to software with a warning.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { renderNodeProblem } from '../src/browser/gpu';
import {
  chromiumArgs,
  GPU_IN_BROWSER,
  graphicsArgs,
  joinFeatureSwitches,
} from '../src/browser/launch';
import { loadConfig } from '../src/config';

describe('graphics switches', () => {
  test('without a GPU: software compositing and SwiftShader for WebGL, in the browser process', () => {
    const args = chromiumArgs();
    expect(args).toEqual(
      expect.arrayContaining(['--disable-gpu', '--enable-unsafe-swiftshader', ...GPU_IN_BROWSER]),
    );
    expect(args.some((a) => a.startsWith('--use-angle'))).toBe(false);
  });

  test('GPU=dri: ANGLE on Vulkan, the GPU blocklist ignored, and no SwiftShader or --disable-gpu', () => {
    const args = chromiumArgs({ gpu: 'dri' });
    expect(args).toEqual(
      expect.arrayContaining(['--use-angle=vulkan', '--ignore-gpu-blocklist', '--use-gl=angle']),
    );
    expect(args).not.toContain('--disable-gpu');
    expect(args.join(' ')).not.toMatch(/swiftshader/i);
    // A GPU driver's crash ends its own process, not the browser.
    expect(args.filter((a) => GPU_IN_BROWSER.includes(a))).toEqual([]);
    expect(graphicsArgs(null)).not.toEqual(graphicsArgs('dri'));
  });

  test('GPU=dri keeps the network service in the browser: one --enable-features with both', () => {
    // Chromium reads only the last of a repeated switch: two lists would drop the first.
    const enable = chromiumArgs({ gpu: 'dri' }).filter((a) => a.startsWith('--enable-features='));
    expect(enable).toHaveLength(1);
    expect(enable[0]?.split('=')[1]?.split(',')).toEqual(
      expect.arrayContaining(['NetworkServiceInProcess2', 'Vulkan', 'DefaultANGLEVulkan']),
    );
    expect(
      joinFeatureSwitches(['--a', '--enable-features=X,Y', '--b', '--enable-features=Y,Z']),
    ).toEqual(['--a', '--enable-features=X,Y,Z', '--b']);
  });

  test('the window is placed and sized on the work area it is given', () => {
    const args = chromiumArgs({ window: { x: 0, y: 25, width: 1920, height: 995 } });
    expect(args).toEqual(
      expect.arrayContaining(['--window-size=1920,995', '--window-position=0,25']),
    );
  });
});

describe('the render node check', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-dri-'));
  afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

  test('a folder that is not there names it and says to pass the node into the container', () => {
    expect(renderNodeProblem(path.join(scratch, 'absent'))).toMatch(
      /cannot be read \(ENOENT\).*render node/,
    );
  });

  test('a folder without renderD* nodes says so', () => {
    fs.writeFileSync(path.join(scratch, 'card0'), '');
    expect(renderNodeProblem(scratch)).toMatch(/holds no render node/);
  });

  test('this machine has no GPU: GPU=dri here is a problem, so the worker draws in software', () => {
    expect(fs.existsSync('/dev/dri')).toBe(false);
    expect(renderNodeProblem()).toMatch(/GPU=dri/);
  });
});

describe('GPU in the worker config', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-gpu-config-'));
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
  test('dri and none are taken; anything else gets a clear error', () => {
    expect(loadConfig({ GPU: 'dri' }, root).gpu).toBe('dri');
    expect(loadConfig({ GPU: 'none' }, root).gpu).toBeNull();
    expect(loadConfig({}, root).gpu).toBeNull();
    expect(() => loadConfig({ GPU: 'cuda' }, root)).toThrow(/GPU.*must be dri/);
  });
});
