import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { cmdlineOf, descendantsOf, pidsMatching, pssMb } from '@persona-browser/testkit/procs';
import type { BenchSection, Row } from './section';
import { atMost } from './section';
import type { BenchWorker } from './spawn';
import { startWorker, waitInitialized } from './spawn';
import { median, range, sleep } from './stats';

/** Section 4: idle PSS of a persona with one blank page: worker, Chromium, Xvfb (and x11vnc). */

const SETTLE_MS = Number(process.env.BENCH_MEMORY_SETTLE_MS ?? 8_000);
const SAMPLES = 3;

interface Sample {
  worker: number;
  chromium: number;
  chromiumProcs: number;
  xvfb: number;
  vnc: number;
  /** Chromium processes under the worker that the profile-dir filter missed. */
  missed: number;
  missedMb: number;
}

const sum = (pids: number[]): number => pids.reduce((acc, pid) => acc + (pssMb(pid) ?? 0), 0);

function sample(w: BenchWorker): Sample {
  const xvfb = w.xvfbPid();
  const chromium = pidsMatching(w.profileDir).filter((pid) => pid !== w.pid && pid !== xvfb);
  const tree = descendantsOf(w.pid).filter((pid) => pid !== xvfb);
  const vnc = tree.filter((pid) => cmdlineOf(pid).startsWith('x11vnc'));
  const missed = tree.filter((pid) => !chromium.includes(pid) && !vnc.includes(pid));
  return {
    worker: pssMb(w.pid) ?? 0,
    chromium: sum(chromium),
    chromiumProcs: chromium.length,
    xvfb: xvfb === null ? 0 : (pssMb(xvfb) ?? 0),
    vnc: sum(vnc),
    missed: missed.length,
    missedMb: sum(missed),
  };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export const memorySection: BenchSection = {
  id: 'memory',
  title: `Idle memory, one blank page (PSS, median of ${SAMPLES} samples after ${SETTLE_MS / 1000} s)`,
  run: async (ctx) => {
    const w = await startWorker({ VNC_PORT: String(await freePort()) });
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
      const med = (f: (s: Sample) => number): number => median(samples.map(f));
      const core = samples.map((s) => s.worker + s.chromium + s.xvfb);
      const last = samples.at(-1) as Sample;
      const rows: Row[] = [
        {
          key: 'memory.idle_pss_mb',
          label: 'worker + Chromium + Xvfb',
          value: median(core),
          unit: 'MB',
          target: atMost(450, 'MB'),
          detail: `samples ${range(core)} MB`,
        },
        {
          key: 'memory.worker_pss_mb',
          label: '  worker (node)',
          value: med((s) => s.worker),
          unit: 'MB',
        },
        {
          key: 'memory.chromium_pss_mb',
          label: '  Chromium',
          value: med((s) => s.chromium),
          unit: 'MB',
          detail: `${last.chromiumProcs} processes with the profile dir in their cmdline`,
        },
        { key: 'memory.xvfb_pss_mb', label: '  Xvfb', value: med((s) => s.xvfb), unit: 'MB' },
        {
          key: 'memory.idle_pss_with_vnc_mb',
          label: 'worker + Chromium + Xvfb + x11vnc',
          value: median(samples.map((s, i) => (core[i] as number) + s.vnc)),
          unit: 'MB',
          target: atMost(450, 'MB'),
          detail: `x11vnc ${med((s) => s.vnc).toFixed(1)} MB (VNC_PORT set, no viewer)`,
        },
        {
          key: 'memory.unmatched_children_mb',
          label: 'worker children outside the filter',
          value: med((s) => s.missedMb),
          unit: 'MB',
          detail: `${last.missed} processes (not counted above)`,
        },
      ];
      return rows;
    } finally {
      await w.stop();
    }
  },
};
