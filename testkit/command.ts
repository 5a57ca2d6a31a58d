/** Commands the test kit runs on this machine (ip, iptables, docker …), as promises. */
import { execFile } from 'node:child_process';

/** Runs a command with a hard timeout; resolves with stdout, rejects with its stderr. */
export function runCommand(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const options = {
      env: { ...process.env, ...opts.env },
      cwd: opts.cwd,
      timeout: opts.timeoutMs ?? 60_000,
      maxBuffer: 64 << 20,
    };
    execFile(cmd, args, options, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${stderr.trim() || err.message}`));
      else resolve(stdout);
    });
  });
}

/** The non-empty lines of a command's output. */
export const listed = (out: string): string[] => out.split('\n').filter(Boolean);
