import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { commandRuns, toolReady } from './system-tools.js';

// A disk whose syncs are slow, for one process: strace attaches to it (every thread) and makes each fsync and
// fdatasync it calls return only after a delay, as a disk that stalls under load (seen here: 50 ms to 1.4 s)
// or a network volume that hangs would. The sync itself is the kernel's, done in full; only its return waits.

/** True when strace is installed (skipped with a line otherwise; an error under CI=true). */
export const straceAvailable = (): boolean =>
  toolReady(commandRuns('strace', ['-V']) ? undefined : 'strace is missing', 'the slow-disk tests', 'make fault-tools installs it');

/** strace attached to every thread of process `pid`, tampering with its syncs as `inject` says, until `detach`. */
function straceSyncs(pid: number, inject: string): Promise<{ detach(): Promise<void> }> {
  const strace = spawn('strace', ['-f', '-p', String(pid), '-e', 'trace=fsync,fdatasync', '-e', `inject=fsync,fdatasync:${inject}`, '-o', '/dev/null'], {
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
        async detach() {
          strace.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

/** The syncs of process `pid` take `delayMs` longer from now until `lift` (which detaches strace). */
export async function slowSyncs(pid: number, delayMs: number): Promise<{ lift(): Promise<void> }> {
  const strace = await straceSyncs(pid, `delay_exit=${delayMs * 1000}`);
  return { lift: () => strace.detach() };
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

/** Whether every thread of process `pid` is stopped (SIGSTOP's group stop, or a tracer's stop). */
export function processStopped(pid: number): boolean {
  return readdirSync(`/proc/${pid}/task`).every((task) => {
    try {
      return /\) [tT]/.test(readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8'));
    } catch {
      return false;
    }
  });
}

/**
 * Stops process `pid` (SIGSTOP, every thread) at its next disk sync, in the middle of a commit: strace sends
 * the signal as the sync is called. Resolves once it is stopped and strace has let go of it (a stopped
 * process stays stopped); `resume` sends SIGCONT.
 */
export async function stopAtNextSync(pid: number, withinMs: number): Promise<{ resume(): void }> {
  const strace = await straceSyncs(pid, 'signal=SIGSTOP:when=1');
  try {
    // Twice in a row: threads also stop for a moment at each system call strace traces.
    const deadline = Date.now() + withinMs;
    for (let seen = 0; seen < 2; seen = processStopped(pid) ? seen + 1 : 0) {
      if (Date.now() > deadline) throw new Error(`process ${pid} made no disk sync within ${withinMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await strace.detach();
  }
  return { resume: () => process.kill(pid, 'SIGCONT') };
}
