#!/usr/bin/env node
/**
 * The test run of `npm test`: every jest file, in two lanes side by side.
 *
 * - The engine lane holds every file that needs the Docker engine (its image, its Swarm test
 *   cluster, a fault proxy in front of it), one after the other as before: those files spend
 *   most of their time waiting on the engine, and two of them at once would share its state.
 * - The host lane holds the rest; the files are split between the lanes so that both end at
 *   about the same time, by each file's seconds in the last measured run (.ci/test-seconds.json).
 * - A file named in SOLO runs alone, once both lanes are done: it measures the machine.
 *
 * The packages are built once, before the lanes (their jest runs skip the global build). Each
 * line a lane prints starts with its name. The run ends with the ten slowest files and one line,
 * `jest: N passed, N failed`, over both lanes; it exits 1 when a test failed or a file did not
 * run. Arguments after `--` go to jest: patterns choose the files, options go to both runs. `--lanes 1` runs every file in one lane, as
 * `jest --runInBand` does; `--record` writes the run's seconds to .ci/test-seconds.json;
 * `--plan` prints each lane's files and runs nothing.
 */
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const readline = require('node:readline');

const ROOT = path.resolve(__dirname, '..');
const SECONDS_FILE = path.join(ROOT, '.ci', 'test-seconds.json');
const SLOWEST = 10;

/** Files that measure the machine itself, and why: they run alone, after both lanes. */
const SOLO = {};

/** What a file imports when it needs the Docker engine. */
const ENGINE_MARKS = [
  /@persona-browser\/testkit\/(image|swarm-cluster|docker-faults|registry)'/,
  /from 'dockerode'/,
];

const rel = (file) => path.relative(ROOT, file);
const usesEngine = (file) => {
  if (file.endsWith('.unit.test.ts')) return false;
  const text = fs.readFileSync(file, 'utf8');
  return ENGINE_MARKS.some((mark) => mark.test(text));
};

function parseArgs(argv) {
  const dash = argv.indexOf('--');
  const own = dash < 0 ? argv : argv.slice(0, dash);
  const jestArgs = dash < 0 ? [] : argv.slice(dash + 1);
  let lanes = 2;
  let record = false;
  let dry = false;
  for (let i = 0; i < own.length; i += 1) {
    if (own[i] === '--lanes') lanes = Number(own[(i += 1)]);
    else if (own[i] === '--record') record = true;
    else if (own[i] === '--plan') dry = true;
    else throw new Error(`test-lanes: unknown argument ${own[i]} (jest's go after --)`);
  }
  if (lanes !== 1 && lanes !== 2) throw new Error('test-lanes: --lanes is 1 or 2');
  return { lanes, record, dry, jestArgs };
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

/**
 * The lanes: engine files in the first, SOLO files apart, and the rest, slowest first, each to
 * the lane that ends sooner.
 */
function plan(files, lanes) {
  const seconds = knownSeconds();
  const cost = (file) => seconds[rel(file)] ?? UNMEASURED_S;
  const solo = files.filter((f) => SOLO[rel(f)]);
  const rest = files.filter((f) => !SOLO[rel(f)]);
  if (lanes === 1) return { lanes: [{ name: 'all', files: rest, s: 0 }], solo };
  const engine = { name: 'engine', files: [], s: 0 };
  const host = { name: 'host', files: [], s: 0 };
  const free = [];
  for (const f of rest) {
    if (usesEngine(f)) {
      engine.files.push(f);
      engine.s += cost(f);
    } else free.push(f);
  }
  free.sort((a, b) => cost(b) - cost(a));
  for (const f of free) {
    const lane = engine.s < host.s ? engine : host;
    lane.files.push(f);
    lane.s += cost(f);
  }
  return { lanes: [engine, host], solo };
}

/** One jest run over the given files, its lines prefixed; resolves with its timings file. */
function runLane(name, files, jestArgs, prefix) {
  // Patterns chose the files already; the lanes take jest's options only.
  const options = jestArgs.filter((a) => a.startsWith('-'));
  const timings = path.join(os.tmpdir(), `test-lanes-${process.pid}-${name}.json`);
  fs.rmSync(timings, { force: true });
  const args = [jestBin, '--runInBand', '--runTestsByPath', ...files, ...options];
  const env = { ...process.env, PERSONA_TESTS_BUILT: '1', JEST_TIMINGS_OUT: timings };
  // Each run its own cache: two jest processes would otherwise write the same map.
  args.push('--cacheDirectory', path.join(os.tmpdir(), `jest-lane-${name}`));
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tag = prefix ? `[${name}] ` : '';
  for (const stream of [child.stdout, child.stderr]) {
    const out = stream === child.stdout ? process.stdout : process.stderr;
    readline.createInterface({ input: stream }).on('line', (line) => out.write(`${tag}${line}\n`));
  }
  const started = Date.now();
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      const s = Math.round((Date.now() - started) / 1000);
      process.stdout.write(`test-lanes: ${name}: ${files.length} files done in ${s} s\n`);
      let result = null;
      try {
        result = JSON.parse(fs.readFileSync(timings, 'utf8'));
      } catch {
        // No timings: the run ended before its reporter did; counted as a failure below.
      }
      fs.rmSync(timings, { force: true });
      resolve({ name, code, signal, result, files: files.length });
    });
  });
}

async function main() {
  const { lanes, record, dry, jestArgs } = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const p = plan(listTests(jestArgs), lanes);
  const runs = p.lanes.filter((l) => l.files.length);
  for (const l of runs) {
    process.stdout.write(`test-lanes: ${l.name}: ${l.files.length} files, ~${Math.round(l.s)} s\n`);
    if (dry) for (const f of l.files) process.stdout.write(`    ${rel(f)}\n`);
  }
  if (dry) return;
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-b'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  const results = await Promise.all(
    runs.map((l) => runLane(l.name, l.files, jestArgs, runs.length > 1)),
  );
  if (p.solo.length) results.push(await runLane('solo', p.solo, jestArgs, true));

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
  }
  const wall = Math.round((Date.now() - started) / 1000);
  const tail = skipped ? `, ${skipped} skipped` : '';
  process.stdout.write(`\njest: ${passed} passed, ${failed} failed${tail} (${wall} s)\n`);
  if (record && failed === 0) {
    const seconds = Object.fromEntries(
      [...timed].sort((a, b) => a.file.localeCompare(b.file)).map((t) => [t.file, Math.round(t.s)]),
    );
    fs.writeFileSync(SECONDS_FILE, `${JSON.stringify(seconds, null, 2)}\n`);
  }
  process.exitCode = failed === 0 && results.every((r) => r.code === 0) ? 0 : 1;
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 2;
});
