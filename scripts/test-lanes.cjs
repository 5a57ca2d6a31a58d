#!/usr/bin/env node
/**
 * The test run of `npm test`: every jest file, in four lanes side by side (`--lanes N`: 1 to 4).
 *
 * - Files that need the Docker engine (its image, a fault proxy in front of it) run one after
 *   the other in an engine lane: they spend most of their time waiting on the engine. With four
 *   lanes those that run a Swarm test cluster (this engine as its manager) have a lane of their
 *   own, started at once with the files that need no persona image, while .ci/run still builds
 *   it; the other engine files (the docker lane) start after a chunk of the queue, by which time
 *   the image is near. The two never touch each other's containers, networks or images: each
 *   file names its own.
 * - The other files wait in a queue, slowest first (by each file's seconds in the last measured
 *   run, .ci/test-seconds.json). The host lanes take a chunk of it at once, the engine lanes
 *   once their own files are done; each lane takes the next chunk when its run ends, and the
 *   chunks shrink as the queue does. So the lanes end close together even when a lane starts
 *   late or the figures are off. The cores sit idle while an engine lane waits on Docker and a
 *   host lane on a page: a second host lane takes that time.
 * - A file named in SOLO runs alone, once the lanes are done: it measures the machine.
 * - `--lint` runs `npm run lint` beside the lanes, at a low priority (nice): it takes the cores
 *   the tests leave, and holds no lane up (first in a lane, it kept that lane's files waiting
 *   520 s in CI). It reads the built packages and writes nothing; its failure fails the run as a
 *   test's does.
 *
 * The packages are built once, before the lanes (their jest runs skip the global build). Each
 * line a lane prints starts with its name. The run ends with the ten slowest files and one line,
 * `jest: N passed, N failed`, over all lanes; it exits 1 when a test failed or a file did not
 * run. Arguments after `--` go to jest: patterns choose the files, options go to every run.
 * `--lanes 1` runs every file in one lane, as `jest --runInBand` does; `--lanes 3` keeps the
 * engine files in one lane; `--record` writes the run's seconds to .ci/test-seconds.json;
 * `--plan` prints each lane's files and runs nothing.
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');
const { setTimeout, clearTimeout } = require('node:timers');
const { printFailure } = require('../testkit/summary-reporter.cjs');

const ROOT = path.resolve(__dirname, '..');
const SECONDS_FILE = path.join(ROOT, '.ci', 'test-seconds.json');
const SLOWEST = 10;

/** Files that measure the machine itself, and why: they run alone, after the lanes. */
const SOLO = {};

/** What a file imports when it needs the Docker engine. */
const ENGINE_MARKS = [
  /@persona-browser\/testkit\/(image|swarm-cluster|docker-faults|registry)'/,
  /from 'dockerode'/,
];
/** What a file imports when it runs a Swarm test cluster. */
const SWARM_MARK = /@persona-browser\/testkit\/swarm-cluster'/;
/** What a file does when it needs the persona image. */
const IMAGE_MARK = /ensurePersonaImage|PERSONA_IMAGE\b|persona-browser:test/;

const rel = (file) => path.relative(ROOT, file);
const marked = (file, marks) => {
  if (file.endsWith('.unit.test.ts')) return false;
  const text = fs.readFileSync(file, 'utf8');
  return marks.some((mark) => mark.test(text));
};
const usesEngine = (file) => marked(file, ENGINE_MARKS);
const usesSwarm = (file) => marked(file, [SWARM_MARK]);
const usesImage = (file) => marked(file, [IMAGE_MARK]);

function parseArgs(argv) {
  const dash = argv.indexOf('--');
  const own = dash < 0 ? argv : argv.slice(0, dash);
  const jestArgs = dash < 0 ? [] : argv.slice(dash + 1);
  let lanes = 4;
  let record = false;
  let dry = false;
  let lint = false;
  for (let i = 0; i < own.length; i += 1) {
    if (own[i] === '--lanes') lanes = Number(own[(i += 1)]);
    else if (own[i] === '--record') record = true;
    else if (own[i] === '--plan') dry = true;
    else if (own[i] === '--lint') lint = true;
    else throw new Error(`test-lanes: unknown argument ${own[i]} (jest's go after --)`);
  }
  if (![1, 2, 3, 4].includes(lanes)) throw new Error('test-lanes: --lanes is 1, 2, 3 or 4');
  return { lanes, record, dry, lint, jestArgs };
}

const jestBin = require.resolve('jest/bin/jest');

function listTests(jestArgs) {
  const out = execFileSync(process.execPath, [jestBin, '--listTests', '--json', ...jestArgs], {
    cwd: ROOT,
    maxBuffer: 16 << 20,
  });
  return JSON.parse(out.toString()).sort();
}

function knownSeconds() {
  try {
    return JSON.parse(fs.readFileSync(SECONDS_FILE, 'utf8'));
  } catch {
    return {};
  }
}

/** The seconds of a file not measured yet: most files take a few. */
const UNMEASURED_S = 5;

/** A chunk of the queue is at least this many seconds of files (each jest run costs ~3 s). */
const MIN_CHUNK_S = 60;

/**
 * The plan: engine files in the engine lanes (Swarm files apart with four lanes, those that need
 * no persona image first), SOLO files apart, and the rest in a queue, slowest first, from which
 * each lane takes a chunk whenever it is free.
 */
function plan(files, lanes) {
  const seconds = knownSeconds();
  const cost = (file) => seconds[rel(file)] ?? UNMEASURED_S;
  const solo = files.filter((f) => SOLO[rel(f)]);
  const rest = files.filter((f) => !SOLO[rel(f)]);
  if (lanes === 1) return { lanes: [{ name: 'all', files: rest }], queue: [], solo, cost };
  const engine = rest.filter(usesEngine);
  const queue = rest.filter((f) => !usesEngine(f)).sort((a, b) => cost(b) - cost(a));
  const named =
    lanes === 4
      ? [
          { name: 'swarm', files: imageLast(engine.filter(usesSwarm)) },
          { name: 'docker', files: engine.filter((f) => !usesSwarm(f)), chunkFirst: true },
        ]
      : [{ name: 'engine', files: imageLast(engine) }];
  named.push({ name: 'host', files: [] });
  for (let i = 2; named.length < lanes; i += 1) named.push({ name: `host${i}`, files: [] });
  return { lanes: named, queue, solo, cost };
}

/** The files that need no persona image first (they run while it is built), each part in name
 * order. */
const imageLast = (files) => [...files.filter((f) => !usesImage(f)), ...files.filter(usesImage)];

/**
 * The next chunk of the queue for a lane that is free: a quarter of what is left for each lane,
 * never under MIN_CHUNK_S, so that the chunks shrink as the queue does and the lanes end close
 * together, whichever started or ran late.
 */
function takeChunk(queue, cost, lanes) {
  const left = queue.reduce((acc, f) => acc + cost(f), 0);
  const target = Math.max(MIN_CHUNK_S, left / (4 * lanes));
  const chunk = [];
  let s = 0;
  while (queue.length && s < target) {
    const f = queue.shift();
    chunk.push(f);
    s += cost(f);
  }
  return chunk;
}

/** A jest run that has reported its results gets this long to exit by itself. */
const EXIT_GRACE_MS = 30_000;

/** One jest run over the given files, its lines prefixed; resolves with its results. */
function runJest(name, files, jestArgs, prefix) {
  // Patterns chose the files already; the lanes take jest's options only.
  const options = jestArgs.filter((a) => a.startsWith('-'));
  const timings = path.join(os.tmpdir(), `test-lanes-${process.pid}-${name}.json`);
  fs.rmSync(timings, { force: true });
  const args = [jestBin, '--runInBand', '--runTestsByPath', ...files, ...options];
  args.push('--testSequencer', path.join(__dirname, 'file-order-sequencer.cjs'));
  const env = { ...process.env, PERSONA_TESTS_BUILT: '1', JEST_TIMINGS_OUT: timings };
  env.JEST_FILE_ORDER = JSON.stringify(files);
  // Each lane its own cache: two jest processes would otherwise write the same map.
  args.push('--cacheDirectory', path.join(os.tmpdir(), `jest-lane-${name}`));
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tag = prefix ? `[${name}] ` : '';
  let killed = null;
  for (const stream of [child.stdout, child.stderr]) {
    const out = stream === child.stdout ? process.stdout : process.stderr;
    readline.createInterface({ input: stream }).on('line', (line) => {
      out.write(`${tag}${line}\n`);
      // Jest's own words when a handle keeps it alive after its run: the results are in, so a
      // run that never exits is ended rather than left to hold the lane for ever.
      if (line.startsWith('Jest did not exit') && !killed) {
        killed = setTimeout(() => child.kill('SIGTERM'), EXIT_GRACE_MS);
      }
    });
  }
  const started = Date.now();
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      if (killed) clearTimeout(killed);
      const s = Math.round((Date.now() - started) / 1000);
      process.stdout.write(`test-lanes: ${name}: ${files.length} files done in ${s} s\n`);
      let result = null;
      try {
        result = JSON.parse(fs.readFileSync(timings, 'utf8'));
      } catch {
        // No timings: the run ended before its reporter did; counted as a failure below.
      }
      fs.rmSync(timings, { force: true });
      // Ended by us after its results were in: what it reported stands.
      const ok = code === 0 || (signal === 'SIGTERM' && result !== null && result.failed === 0);
      resolve({ name, code: ok ? 0 : (code ?? 1), signal, result, files: files.length });
    });
  });
}

/** `npm run lint`, its lines prefixed; resolves with its exit code. */
function runLint(prefix) {
  const started = Date.now();
  // Niced: it takes the cores the tests and the image build leave.
  const child = spawn('nice', ['-n', '10', 'npm', 'run', 'lint', '--silent'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tag = prefix ? '[lint] ' : '';
  for (const stream of [child.stdout, child.stderr]) {
    const out = stream === child.stdout ? process.stdout : process.stderr;
    readline.createInterface({ input: stream }).on('line', (line) => out.write(`${tag}${line}\n`));
  }
  return new Promise((resolve) => {
    child.on('close', (code) => {
      const s = Math.round((Date.now() - started) / 1000);
      process.stdout.write(`test-lanes: lint ${code === 0 ? 'passed' : 'FAILED'} in ${s} s\n`);
      resolve(code ?? 1);
    });
  });
}

/** A lane: its own files in one run, then chunks of the queue until it is empty. */
async function runLane(lane, p, jestArgs, prefix, lanes) {
  const started = Date.now();
  const results = [];
  const chunk = lane.chunkFirst ? takeChunk(p.queue, p.cost, lanes) : [];
  if (chunk.length) results.push(await runJest(lane.name, chunk, jestArgs, prefix));
  if (lane.files.length) results.push(await runJest(lane.name, lane.files, jestArgs, prefix));
  for (;;) {
    const chunk = takeChunk(p.queue, p.cost, lanes);
    if (!chunk.length) break;
    results.push(await runJest(lane.name, chunk, jestArgs, prefix));
  }
  const files = results.reduce((acc, r) => acc + r.files, 0);
  const s = Math.round((Date.now() - started) / 1000);
  process.stdout.write(
    `test-lanes: ${lane.name} lane: ${files} files in ${results.length} runs, ended after ${s} s\n`,
  );
  return results;
}

async function main() {
  const { lanes, record, dry, lint, jestArgs } = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const p = plan(listTests(jestArgs), lanes);
  const runs = p.lanes.filter((l) => l.files.length || p.queue.length);
  const estimate = (files) => Math.round(files.reduce((acc, f) => acc + p.cost(f), 0));
  for (const l of p.lanes) {
    if (!l.files.length) continue;
    process.stdout.write(
      `test-lanes: ${l.name}: ${l.files.length} files ${l.chunkFirst ? 'after a chunk' : 'first'}, ~${estimate(l.files)} s\n`,
    );
    if (dry) for (const f of l.files) process.stdout.write(`    ${rel(f)}\n`);
  }
  if (p.queue.length) {
    process.stdout.write(`test-lanes: queue: ${p.queue.length} files, ~${estimate(p.queue)} s\n`);
    if (dry) for (const f of p.queue) process.stdout.write(`    ${rel(f)}\n`);
  }
  if (dry) return;
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  const linting = lint ? runLint(runs.length > 0) : Promise.resolve(0);
  const results = (
    await Promise.all(runs.map((l) => runLane(l, p, jestArgs, runs.length > 1, runs.length)))
  ).flat();
  const linted = await linting;
  if (p.solo.length) results.push(await runJest('solo', p.solo, jestArgs, true));

  const timed = results.flatMap((r) => r.result?.files ?? []).sort((a, b) => b.s - a.s);
  const total = timed.reduce((acc, t) => acc + t.s, 0);
  process.stdout.write(`\nslowest files (of ${Math.round(total)} s in ${timed.length}):\n`);
  for (const t of timed.slice(0, SLOWEST)) {
    process.stdout.write(`  ${t.s.toFixed(1).padStart(7)} s  ${t.file}\n`);
  }
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const r of results) {
    if (!r.result) {
      process.stdout.write(
        `lane ${r.name} ended without its results (code ${r.code}, ${r.signal ?? 'no signal'})\n`,
      );
      failed += 1;
      continue;
    }
    passed += r.result.passed;
    failed += r.result.failed;
    skipped += r.result.skipped;
    for (const file of r.result.broken) process.stdout.write(`suite failed to run: ${file}\n`);
    for (const f of r.result.failures ?? []) printFailure(f);
  }
  const wall = Math.round((Date.now() - started) / 1000);
  const tail = skipped ? `, ${skipped} skipped` : '';
  if (linted !== 0)
    process.stdout.write(`failed: npm run lint (exit ${linted}), its output above\n`);
  process.stdout.write(`\njest: ${passed} passed, ${failed} failed${tail} (${wall} s)\n`);
  if (record && failed === 0) {
    const seconds = Object.fromEntries(
      [...timed].sort((a, b) => a.file.localeCompare(b.file)).map((t) => [t.file, Math.round(t.s)]),
    );
    fs.writeFileSync(SECONDS_FILE, `${JSON.stringify(seconds, null, 2)}\n`);
  }
  process.exitCode = linted === 0 && failed === 0 && results.every((r) => r.code === 0) ? 0 : 1;
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 2;
});
