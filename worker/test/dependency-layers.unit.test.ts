import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The worker's layer rules (.dependency-cruiser.worker-layers.cjs) are trusted once each has
 * failed on a control: for every layer, a file placed in it that imports the layer just above,
 * and a file outside every layer; so are its folder rules (.dependency-cruiser.cjs: identity/
 * not on browser/, recording/ not on plugins/, store/ on nothing of the worker). dependency-cruiser runs on those files with the repository's
 * configuration and must name each rule against its control. The controls are removed after.
 */

const ROOT = path.resolve(__dirname, '../..');
const SRC = path.join(ROOT, 'worker/src');
const TAG = `layer-control-${process.pid}`;

/** Each rule, the folder its control sits in, and what the control imports from above. */
const CONTROLS: Array<{ rule: string; folder: string; imports: string }> = [
  { rule: 'worker-layer-routes', folder: 'routes', imports: '../main' },
  { rule: 'worker-layer-plugins-live', folder: 'plugins', imports: '../routes/system' },
  { rule: 'worker-layer-plugins-live', folder: 'live', imports: '../routes/system' },
  { rule: 'worker-layer-calls', folder: 'http', imports: '../live/index' },
  { rule: 'worker-layer-calls', folder: 'human', imports: '../plugins/context' },
  { rule: 'worker-layer-browser', folder: 'browser', imports: '../capture/registry' },
  { rule: 'worker-layer-identity', folder: 'identity', imports: '../browser/managed-page' },
  { rule: 'worker-layer-devtools', folder: 'devtools', imports: '../identity/platform' },
  { rule: 'worker-layer-leaves', folder: 'log', imports: '../devtools/private-access' },
  { rule: 'worker-layer-unplaced', folder: `${TAG}-folder`, imports: '../errors' },
  { rule: 'worker-identity-not-browser', folder: 'identity', imports: '../browser/navigator' },
  { rule: 'worker-recording-not-plugins', folder: 'recording', imports: '../plugins/bundle-store' },
  { rule: 'worker-store-stands-alone', folder: 'store', imports: '../errors' },
];

const files = CONTROLS.map((c, i) => ({
  ...c,
  file: path.join(SRC, c.folder, `${TAG}-${i}.ts`),
}));

function depcruise(targets: string[]): Promise<string> {
  const bin = path.join(ROOT, 'node_modules/.bin/depcruise');
  const args = [...targets, '--config', '.dependency-cruiser.cjs', '--output-type', 'json'];
  return new Promise((resolve, reject) => {
    // Exits non-zero when it finds violations, which is what the controls are for.
    execFile(bin, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (!stdout)
        reject(new Error(`depcruise printed nothing: ${stderr || (err?.message ?? '')}`));
      else resolve(stdout);
    });
  });
}

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

/** The violations in dependency-cruiser's JSON report. */
function violationsOf(json: string): Violation[] {
  return (JSON.parse(json) as { summary: { violations: Violation[] } }).summary.violations;
}

afterAll(() => {
  for (const f of files) fs.rmSync(f.file, { force: true });
  fs.rmSync(path.join(SRC, `${TAG}-folder`), { recursive: true, force: true });
});

test("each of the worker's layer rules fails on a control that imports upwards, by its name", async () => {
  for (const f of files) {
    fs.mkdirSync(path.dirname(f.file), { recursive: true });
    fs.writeFileSync(f.file, `import '${f.imports}';\n`);
  }
  let violations: Violation[];
  try {
    violations = violationsOf(await depcruise(files.map((f) => path.relative(ROOT, f.file))));
  } finally {
    for (const f of files) fs.rmSync(f.file, { force: true });
  }
  for (const f of files) {
    const from = path.relative(ROOT, f.file);
    const named = violations.filter((v) => v.from === from).map((v) => v.rule.name);
    expect({ from, rules: named }).toEqual({ from, rules: expect.arrayContaining([f.rule]) });
  }
}, 120_000);
