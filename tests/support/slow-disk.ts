import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { commandRuns, toolReady } from './system-tools.js';

// A disk whose syncs are slow, for one process: strace attaches to it (every thread) and makes each fsync and
// fdatasync it calls return only after a delay, as a disk that stalls under load (seen here: 50 ms to 1.4 s)
// or a network volume that hangs would. The sync itself is the kernel's, done in full; only its return waits.

/** True when strace is installed (skipped with a line otherwise; an error under CI=true). */
export const straceAvailable = (): boolean =>
  toolReady(commandRuns('strace', ['-V']) ? undefined : 'strace is missing', 'the slow-disk tests', 'make fault-tools installs it');

/** The syncs of process `pid` take `delayMs` longer from now until `lift` (which detaches strace). */
export function slowSyncs(pid: number, delayMs: number): Promise<{ lift(): Promise<void> }> {
  const strace = spawn('strace', ['-f', '-p', String(pid), '-e', 'trace=fsync,fdatasync', '-e', `inject=fsync,fdatasync:delay_exit=${delayMs * 1000}`, '-o', '/dev/null'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => strace.once('exit', () => resolve()));
  let said = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`strace did not attach to ${pid} within 10 s: ${said}`)), 10_000);
    strace.once('exit', (code) => reject(new Error(`strace exited with ${code} before attaching: ${said}`)));
    strace.stderr.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      // "strace: Process 123 attached with 11 threads": every thread is traced from here on.
      if (!/Process \d+ attached/.test(said)) return;
      clearTimeout(timer);
      resolve({
        async lift() {
          strace.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

/** fsync and fdatasync's numbers on this machine's architecture (/proc's syscall file gives the number). */
const SYNC_CALLS: Record<string, readonly string[]> = { x64: ['74', '75'], arm64: ['82', '83'] };

/** Whether a thread of process `pid` is held in a sync, stopped by strace (state `t`) as it returns. */
export function syncHeld(pid: number): boolean {
  return readdirSync(`/proc/${pid}/task`).some((task) => {
    try {
      const state = /\) (\S)/.exec(readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8'))?.[1];
      const call = readFileSync(`/proc/${pid}/task/${task}/syscall`, 'utf8').split(' ')[0]!;
      return state === 't' && (SYNC_CALLS[process.arch] ?? []).includes(call);
    } catch {
      return false;
    }
  });
}
