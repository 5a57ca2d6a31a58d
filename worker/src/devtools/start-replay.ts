import fs from 'node:fs';

/**
 * How to start a browser whose `executablePath` is a launcher script (Debian's
 * `/usr/bin/chromium` is a shell script that reads /etc/chromium.d, adds its switches and
 * environment, then execs `/usr/lib/chromium/chromium`): the program it execs, the switches it
 * put before the worker's own, and the environment it added. Read from the first browser the
 * script started, so a later start in the same worker (a wake from light sleep, a restart after
 * a crash) runs that same command line in that same environment without the script's cost.
 */
export interface StartReplay {
  program: string;
  leading: string[];
  addedEnv: Record<string, string>;
}

/**
 * What was read of each executable, for the life of the worker: its replay, or null when it is
 * not to be replayed (read once, so a later start reads no /proc again).
 */
const replays = new Map<string, StartReplay | null>();

/** The command a start runs: the replay of `executablePath`'s script when one was read. */
export function startCommand(
  executablePath: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): { program: string; args: string[]; env: NodeJS.ProcessEnv } {
  const replay = replays.get(executablePath);
  if (!replay) return { program: executablePath, args: [...args], env };
  return {
    program: replay.program,
    args: [...replay.leading, ...args],
    env: { ...env, ...replay.addedEnv },
  };
}

/**
 * Reads, from a browser `executablePath` started with `args` and `env` (and now running as
 * `pid`), what its launcher script changed, once. No replay is kept when `executablePath` is
 * the program itself, or when the command line does not end with `args` as Chromium reads them
 * (a script that drops or changes a switch is not replayed: every start goes through it).
 */
export function learnStart(
  executablePath: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  pid: number,
): void {
  if (replays.has(executablePath)) return;
  replays.set(executablePath, readReplay(executablePath, args, env, pid));
}

function readReplay(
  executablePath: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  pid: number,
): StartReplay | null {
  let program: string;
  let line: string[];
  let environ: string[];
  // Nothing read (the process gone, /proc not there): no replay, and the launch goes on.
  try {
    program = fs.readlinkSync(`/proc/${pid}/exe`);
    line = splitNul(fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8'));
    environ = splitNul(fs.readFileSync(`/proc/${pid}/environ`, 'utf8'));
    if (program === fs.realpathSync(executablePath)) return null;
  } catch {
    return null;
  }
  if (line.length < args.length + 1) return null;
  if (!sameReading(line.slice(line.length - args.length), args)) return null;
  const addedEnv: Record<string, string> = {};
  for (const entry of environ) {
    const eq = entry.indexOf('=');
    if (eq <= 0) continue;
    const key = entry.slice(0, eq);
    const value = entry.slice(eq + 1);
    if (env[key] !== value) addedEnv[key] = value;
  }
  // A variable the script took away is not replayed: the program would see it again.
  const kept = new Set(environ.map((e) => e.slice(0, e.indexOf('='))));
  if (Object.entries(env).some(([k, v]) => v !== undefined && !kept.has(k))) return null;
  return { program, leading: line.slice(1, line.length - args.length), addedEnv };
}

/**
 * Whether Chromium reads `a` as it reads `b`: each switch with the same value (the last one
 * given, as Chromium keeps) and the other arguments in the same order. Where a switch stands
 * changes nothing else (Debian's script moves the first page's URL before the switches, and
 * with it the switches after it); a `--` (every later argument no switch) is not compared.
 */
function sameReading(a: readonly string[], b: readonly string[]): boolean {
  if (a.includes('--') || b.includes('--')) return false;
  const read = (list: readonly string[]): string => {
    const switches = new Map<string, string>();
    const others: string[] = [];
    for (const arg of list) {
      const m = /^--?([^=]+)(?:=(.*))?$/s.exec(arg);
      if (m?.[1]) switches.set(m[1], m[2] ?? '');
      else others.push(arg);
    }
    return JSON.stringify([[...switches].sort(([x], [y]) => (x < y ? -1 : 1)), others]);
  };
  return read(a) === read(b);
}

function splitNul(text: string): string[] {
  const parts = text.split('\0');
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}
