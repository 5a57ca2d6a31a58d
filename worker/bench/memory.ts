import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WORKER_NODE_FLAGS } from '@persona-browser/contracts';
import { cmdlineOf, descendantsOf, pidsMatching } from '@persona-browser/testkit/procs';
import { RfbClient } from '@persona-browser/testkit/rfb-client';
import type { BenchContext, BenchSection, Row } from './section';
import { atMost } from './section';
import type { BenchWorker } from './spawn';
import { BENCH_KEY, startWorker, waitInitialized } from './spawn';
import { median, range, sleep } from './stats';
import { findBrowserBinary } from '../src/browser/launch';

/**
 * Section 4: the memory a persona with one blank page holds, per process group: anonymous and
 * shared-memory PSS (what the host's MemAvailable loses), file-backed PSS beside it; then the
 * same with a live view open (x11vnc runs only then). BENCH_CHROMIUM_SWITCHES and
 * BENCH_NODE_FLAGS make it a trial of switches against the default.
 */

const SETTLE_MS = Number(process.env.BENCH_MEMORY_SETTLE_MS ?? 8_000);
const SAMPLES = 3;
/** A trial's extra switches for Chromium (`--x --y=1`), for measuring one against the default. */
const CHROMIUM_SWITCHES = (process.env.BENCH_CHROMIUM_SWITCHES ?? '').split(' ').filter(Boolean);
/** A trial's extra flags for the worker's node, after the image's WORKER_NODE_FLAGS. */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);

/**
 * A browser command that is the installed browser with CHROMIUM_SWITCHES added: a shell script,
 * handed to the worker as CHROME_PATH. A feature list is added to the command line's own list,
 * since Chromium reads only the last `--enable-features` (or `--disable-features`).
 */
function browserWithSwitches(dir: string): string {
  const lists = CHROMIUM_SWITCHES.filter((s) => /^--(en|dis)able-features=/.test(s));
  const plain = CHROMIUM_SWITCHES.filter((s) => !lists.includes(s));
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
  const cases = lists.map((s) => {
    const [name, value] = s.split('=', 2) as [string, string];
    return `    ${name}=*) a="$a,${value}"; seen="$seen ${name}" ;;`;
  });
  const missing = lists.map((s) => {
    const name = s.split('=', 1)[0] as string;
    return `case "$seen" in *" ${name}"*) ;; *) set -- "$@" ${quote(s)} ;; esac`;
  });
  const file = path.join(dir, 'chromium-trial');
  const script = [
    '#!/bin/sh',
    '# The memory bench: the installed browser with BENCH_CHROMIUM_SWITCHES added.',
    'n=$#; seen=""',
    'for a in "$@"; do',
    '  case "$a" in',
    ...cases,
    '  esac',
    '  set -- "$@" "$a"',
    'done',
    'shift "$n"',
    ...missing,
    `exec ${quote(findBrowserBinary(process.env.CHROME_PATH ?? null))} "$@" ${plain.map(quote).join(' ')}`,
    '',
  ].join('\n');
  fs.writeFileSync(file, script, { mode: 0o755 });
  return file;
}

/** The process groups the breakdown prints, in this order. */
const GROUPS = [
  'worker (node)',
  'browser',
  'GPU',
  'renderers',
  'network service',
  'storage service',
  'other utilities',
  'zygotes',
  'crashpad',
  'Xvfb',
  'x11vnc',
  'other',
] as const;
type Group = (typeof GROUPS)[number];

/** Which group a process of the worker's tree belongs to, from its command line. */
export function groupOf(cmdline: string): Group {
  const type = /--type=(\S+)/.exec(cmdline)?.[1];
  const exe = cmdline.split(' ')[0] ?? '';
  if (exe.endsWith('x11vnc')) return 'x11vnc';
  if (exe.endsWith('Xvfb')) return 'Xvfb';
  if (/crashpad/.test(exe) || type === 'crashpad-handler') return 'crashpad';
  if (type === 'gpu-process') return 'GPU';
  if (type === 'renderer') return 'renderers';
  if (type === 'zygote') return 'zygotes';
  if (type === 'utility') {
    const sub = /--utility-sub-type=(\S+)/.exec(cmdline)?.[1] ?? '';
    if (sub.startsWith('network.')) return 'network service';
    if (sub.startsWith('storage.')) return 'storage service';
    return 'other utilities';
  }
  if (type === undefined && /chrom/i.test(exe)) return 'browser';
  return 'other';
}

/**
 * A process's PSS split in MB: `anon` is its anonymous and shared-memory pages (what the host
 * loses to it: MemAvailable drops by about that), `file` its share of mapped files (Chromium's
 * binary and libraries, shared with every other Chromium on the host and reclaimable).
 */
function pssParts(pid: number): { anon: number; file: number } | null {
  let rollup: string;
  try {
    rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    return null;
  }
  const kb = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0);
  return { anon: (kb('Pss_Anon') + kb('Pss_Shmem')) / 1024, file: kb('Pss_File') / 1024 };
}

interface Sample {
  /** One line per process (pid, group, MB, the start of its command line), for stderr. */
  lines: string[];
  /** Anonymous + shared-memory PSS (MB), file-backed PSS and process count per group. */
  mb: Record<Group, number>;
  file: Record<Group, number>;
  procs: Record<Group, number>;
  /** Utility sub-types seen, for the detail column. */
  utilities: string[];
}

function sample(w: BenchWorker): Sample {
  const mb = Object.fromEntries(GROUPS.map((g) => [g, 0])) as Record<Group, number>;
  const file = Object.fromEntries(GROUPS.map((g) => [g, 0])) as Record<Group, number>;
  const procs = Object.fromEntries(GROUPS.map((g) => [g, 0])) as Record<Group, number>;
  const utilities: string[] = [];
  const lines: string[] = [];
  const xvfb = w.xvfbPid();
  const tree = new Set([w.pid, ...descendantsOf(w.pid)]);
  // Chromium's zygotes are re-parented by nobody, but be sure: anything with the profile dir.
  for (const pid of pidsMatching(w.profileDir)) tree.add(pid);
  if (xvfb !== null) tree.add(xvfb);
  for (const pid of tree) {
    const pss = pssParts(pid);
    if (pss === null) continue;
    const cmd = cmdlineOf(pid);
    const group = pid === w.pid ? 'worker (node)' : groupOf(cmd);
    lines.push(
      `${pid} ${group}: ${pss.anon.toFixed(1)} + ${pss.file.toFixed(1)} MB  ${cmd.replace(/ --(?!type|utility-sub-type|renderer-client-id|extension-process)\S+/g, '').slice(0, 160)}`,
    );
    mb[group] += pss.anon;
    file[group] += pss.file;
    procs[group] += 1;
    if (group === 'other utilities') {
      utilities.push(/--utility-sub-type=(\S+)/.exec(cmd)?.[1] ?? '?');
    }
  }
  return { lines, mb, file, procs, utilities };
}

const total = (s: Sample): number => GROUPS.reduce((acc, g) => acc + s.mb[g], 0);
const totalFile = (s: Sample): number => GROUPS.reduce((acc, g) => acc + s.file[g], 0);

/** The idle rows: the whole persona, then each group (stderr gets each process). */
function breakdown(samples: Sample[], ctx: BenchContext): Row[] {
  const med = (f: (s: Sample) => number): number => median(samples.map(f));
  const last = samples.at(-1) as Sample;
  for (const line of last.lines) ctx.progress(`memory: ${line}`);
  const totals = samples.map(total);
  const rows: Row[] = [
    {
      key: 'memory.idle_pss_mb',
      label: 'persona, anon+shmem PSS',
      value: median(totals),
      unit: 'MB',
      target: atMost(150, 'MB'),
      detail: `samples ${range(totals)} MB; + ${med(totalFile).toFixed(0)} MB file-backed PSS`,
    },
  ];
  for (const g of GROUPS) {
    if (!samples.some((s) => s.procs[g] > 0)) continue;
    const n = last.procs[g];
    const extra = g === 'other utilities' ? `: ${last.utilities.join(', ')}` : '';
    rows.push({
      key: `memory.${g.replace(/\W+/g, '_').replace(/_$/, '')}_pss_mb`,
      label: `  ${g}`,
      value: med((s) => s.mb[g]),
      unit: 'MB',
      detail: `${n} process${n === 1 ? '' : 'es'}, + ${med((s) => s.file[g]).toFixed(1)} MB file${extra}`,
    });
  }
  return rows;
}

/** A live-view viewer with its first screen update read, as the panel's viewer would be. */
async function openViewer(w: BenchWorker): Promise<RfbClient> {
  const r = await fetch(`${w.url}/vnc/session`, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_KEY}` },
  });
  if (r.status !== 200) throw new Error(`POST /vnc/session answered ${r.status}`);
  const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const c = await RfbClient.connect(`${w.url.replace('http', 'ws')}/vnc/websockify`, cookie);
  await c.handshake();
  c.requestUpdate(false, 0, 0, 1920, 1080);
  await c.readUpdate();
  return c;
}

export const memorySection: BenchSection = {
  id: 'memory',
  title: `Idle memory, one blank page (PSS, median of ${SAMPLES} samples after ${SETTLE_MS / 1000} s)`,
  run: async (ctx) => {
    const trialDir = CHROMIUM_SWITCHES.length
      ? fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bench-trial-'))
      : null;
    const env: Record<string, string> = trialDir
      ? { CHROME_PATH: browserWithSwitches(trialDir) }
      : {};
    if (CHROMIUM_SWITCHES.length || NODE_FLAGS.length) {
      ctx.progress(`memory: trial with ${[...CHROMIUM_SWITCHES, ...NODE_FLAGS].join(' ')}`);
    }
    const w = await startWorker(env, [...WORKER_NODE_FLAGS, ...NODE_FLAGS]);
    try {
      await waitInitialized(w);
      const r = await w.client.json('POST', '/api/v1/ops/create-page', {});
      if (r.status !== 200) throw new Error(`create-page answered ${r.status}`);
      if (w.xvfbPid() === null) throw new Error('the worker logged no Xvfb pid');
      ctx.progress(`memory: settling ${SETTLE_MS / 1000} s`);
      await sleep(SETTLE_MS);
      const samples: Sample[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        if (i) await sleep(1_000);
        samples.push(sample(w));
      }
      const rows = breakdown(samples, ctx);
      // A live view open: x11vnc runs while someone watches (started for the first viewer).
      const viewer = await openViewer(w);
      try {
        await sleep(2_000);
        const watched = sample(w);
        const n = watched.procs.x11vnc;
        rows.push({
          key: 'memory.watched_pss_mb',
          label: 'persona with a live view open',
          value: total(watched),
          unit: 'MB',
          detail: `x11vnc ${watched.mb.x11vnc.toFixed(1)} MB (${n} process${n === 1 ? '' : 'es'}), worker ${watched.mb['worker (node)'].toFixed(1)} MB`,
        });
      } finally {
        await viewer.close();
      }
      return rows;
    } finally {
      await w.stop();
      if (trialDir) fs.rmSync(trialDir, { recursive: true, force: true });
    }
  },
};
