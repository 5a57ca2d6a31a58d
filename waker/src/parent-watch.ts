/**
 * Calls `onGone` once, when this process is no longer the child of `parentPid`. A parent that
 * dies, even by SIGKILL, sends no signal: its children are handed to init (or a subreaper) and
 * `process.ppid` changes, so it is polled. Returns a function that stops the watch.
 */
export function watchParent(
  parentPid: number,
  onGone: (ppid: number) => void,
  everyMs = 1_000,
  readPpid: () => number = () => process.ppid,
): () => void {
  const check = (): void => {
    const ppid = readPpid();
    if (ppid === parentPid) return;
    clearInterval(timer);
    onGone(ppid);
  };
  const timer = setInterval(check, everyMs);
  // The watch alone never keeps the process alive.
  timer.unref();
  return () => clearInterval(timer);
}
