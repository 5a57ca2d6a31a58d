import fs from 'node:fs';
import os from 'node:os';
import type { Browser } from 'puppeteer-core';
import { startWorker, stopAll, waitInitialized } from '../spawn';
import type { Recorded } from './events';
import { typingFigures, scrollFigures } from './key-metrics';
import { mouseFigures } from './mouse-metrics';
import { ghostDriver, TYPE_DELAY_MS } from './ghost';
import { apiDriver } from './ours';
import type { RecordServer } from './record-page';
import { startRecordServer } from './record-page';
import type { Phase, Recording, Script } from './session';
import { recordSession } from './session';
import type { Column } from './table';
import { formatNotes, formatTable, summaryValues } from './table';
import { connectToWorker, openTab } from './tabs';
import { planTrials } from './trials';

/**
 * `npm run bench:human`: the human-likeness figures, measured from the events a
 * recording page saw, for our REST primitives beside ghost-cursor driving the same targets in
 * the same browser. Figures are printed, never asserted. HUMAN_MOVES (30) and HUMAN_FITTS_REPS
 * (2) size the mouse part, HUMAN_SCROLL_ROUNDS (1) the scroll part; HUMAN_PHASES
 * (mouse,typing,scroll) runs only the phases named;
 * HUMAN_DUMP=FILE also writes both raw event logs there as JSON.
 */

const MOVES_500 = Number(process.env.HUMAN_MOVES ?? 30);
const FITTS_REPS = Number(process.env.HUMAN_FITTS_REPS ?? 2);
/** Typing calls of the text per side (ours); ghost-cursor's page.type has no typos to count. */
const TYPING_RUNS = Number(process.env.HUMAN_TYPING_RUNS ?? 10);
const TEXT =
  'The quick brown fox jumps over the lazy dog, then naps under a tall oak tree. ' +
  'Meanwhile, 3 curious kids wander by and ask what time it is; nobody answers. ' +
  'Later that evening the wind picks up, leaves scatter across the old stone path, ' +
  'and the fox wakes, stretches and trots home before the rain.';
/**
 * The scrolls per side, HUMAN_SCROLL_ROUNDS times over (1): each round moves the page 1500 px
 * down, and the recording page is 20000 px tall, so up to 12 rounds fit.
 */
const SCROLL_ROUNDS = Number(process.env.HUMAN_SCROLL_ROUNDS ?? 1);
const SCROLLS = Array.from({ length: SCROLL_ROUNDS }, () => [500, 800, -400, 600]).flat();
const PHASES: readonly Phase[] = ['mouse', 'typing', 'scroll'];

/** HUMAN_PHASES as a list of known phases (all of them when unset). */
function phasesToRun(): Phase[] {
  const named = (process.env.HUMAN_PHASES ?? PHASES.join(','))
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const unknown = named.filter((p) => !PHASES.includes(p as Phase));
  if (unknown.length || !named.length) {
    throw new Error(
      `HUMAN_PHASES: unknown ${unknown.join(', ') || '(empty)'}; use ${PHASES.join(',')}`,
    );
  }
  return named as Phase[];
}

const round2 = (n: number): number => Math.round(n * 100) / 100;
const progress = (m: string): void => void process.stderr.write(`  … ${m}\n`);

function ghostVersion(): string {
  const file = require.resolve('ghost-cursor/package.json');
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}

function column(title: string, rec: Recording, text: string): Column {
  const log: Recorded[] = rec.log;
  return {
    title,
    figures: {
      ...mouseFigures(log),
      ...typingFigures(log, text, rec.values),
      ...scrollFigures(log),
    },
    missing: rec.errors,
  };
}

async function main(): Promise<number> {
  const phases = phasesToRun();
  const startedAt = performance.now();
  const loadBefore = os.loadavg()[0] ?? 0;
  let server: RecordServer | null = null;
  let browser: Browser | null = null;
  const cleanUp = async (): Promise<void> => {
    await browser?.disconnect().catch(() => undefined);
    await stopAll(true);
    await server?.close();
  };
  const interrupted = (signal: NodeJS.Signals): void => {
    process.stderr.write(`bench:human: ${signal}, stopping the worker\n`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  process.once('uncaughtException', (err) => {
    process.stderr.write(`bench:human: uncaught ${err.stack ?? err.message}\n`);
    void cleanUp().finally(() => process.exit(1));
  });
  let cols: Column[];
  let trials: number;
  const warnings: string[] = [];
  try {
    server = await startRecordServer();
    process.stderr.write('bench:human: starting the worker\n');
    // DevTools on a port too: ghost-cursor drives the same browser through it.
    const w = await startWorker({ BROWSER_SLOWMO: '0', DEVTOOLS_PORT: '0' });
    await waitInitialized(w);
    browser = await connectToWorker(w);
    const oursUrl = `${server.url}?tab=ours`;
    const oursPage = await openTab(w, browser, 'ours', oursUrl);
    const viewport = await oursPage.evaluate(() => ({
      width: window.innerWidth,
      height: window.innerHeight,
    }));
    const script: Script = {
      trials: planTrials(viewport, MOVES_500, FITTS_REPS),
      text: TEXT,
      typingRuns: TYPING_RUNS,
      scrolls: SCROLLS,
      phases,
    };
    trials = script.trials.length - 1;
    process.stderr.write(
      `bench:human: ours — ${trials} moves in a ${viewport.width}×${viewport.height} viewport, ${TYPING_RUNS} × ${TEXT.length} chars, ${SCROLLS.length} scrolls\n`,
    );
    const ours = await recordSession(oursPage, apiDriver(w, 'ours'), script, progress);
    process.stderr.write('bench:human: ghost-cursor\n');
    const ghostUrl = `${server.url}?tab=ghost`;
    const ghostPage = await openTab(w, browser, 'ghost', ghostUrl);
    const ghost = await recordSession(
      ghostPage,
      ghostDriver(ghostPage),
      { ...script, typingRuns: 1 },
      progress,
    );
    if (process.env.HUMAN_DUMP) {
      fs.writeFileSync(process.env.HUMAN_DUMP, JSON.stringify({ script, ours, ghost }));
    }
    const phaseTimes = (r: Recording): string =>
      `mouse ${r.seconds.mouse.toFixed(0)} s, typing ${r.seconds.typing.toFixed(0)} s, scroll ${r.seconds.scroll.toFixed(0)} s`;
    progress(`ours: ${phaseTimes(ours)}; ghost-cursor: ${phaseTimes(ghost)}`);
    for (const [name, rec] of [
      ['ours', ours],
      ['ghost-cursor', ghost],
    ] as const) {
      if (rec.hiddenMarks) warnings.push(`${name}'s tab was hidden at ${rec.hiddenMarks} marks`);
    }
    cols = [
      column('ours (REST API)', ours, TEXT),
      column(`ghost-cursor ${ghostVersion()}`, ghost, TEXT),
    ];
  } finally {
    await cleanUp();
  }
  const seconds = (performance.now() - startedAt) / 1000;
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  const load = { start: round2(loadBefore), end: round2(os.loadavg()[0] ?? 0) };
  process.stdout.write(
    `\npersona-browser human-likeness — ${os.cpus().length} × ${cpu}, node ${process.version}, ${seconds.toFixed(0)} s\n` +
      `1-min load average ${load.start} at start, ${load.end} at end (other work on the machine skews timing figures).\n` +
      `From the events a recording page saw: ${trials} mouse moves per side (the same seeded targets), ` +
      `${TEXT.length} typed chars (${TYPING_RUNS} calls for ours, 1 for page.type), ${SCROLLS.length} scrolls (${SCROLL_ROUNDS} × 500, 800, -400, 600 px).\n` +
      `ghost-cursor has no typing: its typing rows are puppeteer page.type with delay ${TYPE_DELAY_MS} ms; ` +
      'scrolling is ghost-cursor scroll() with its defaults. ✓/✗ compare with the targets; nothing is asserted.\n\n',
  );
  process.stdout.write(
    `${formatTable(cols)}\n\nNotes (sample sizes, spreads):\n${formatNotes(cols)}\n`,
  );
  const summary = {
    bench: 'persona-browser-human',
    date: new Date().toISOString(),
    seconds: Math.round(seconds),
    loadavg_1m: load,
    moves: trials,
    text_chars: TEXT.length,
    ours: summaryValues(cols[0] as Column),
    ghost_cursor: summaryValues(cols[1] as Column),
    errors: { ours: cols[0]?.missing ?? {}, ghost_cursor: cols[1]?.missing ?? {} },
  };
  process.stdout.write(`\nJSON summary:\n${JSON.stringify(summary)}\n`);
  // A primitive not served yet is reported as n/a; any other failure fails the run.
  const failed = cols.some((c) => Object.values(c.missing).some((m) => !m.startsWith('n/a')));
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  async (err: unknown) => {
    process.stderr.write(
      `bench:human: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    await stopAll(true);
    process.exitCode = 1;
  },
);
