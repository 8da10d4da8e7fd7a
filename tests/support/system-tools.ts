import { execFileSync } from 'node:child_process';

// The programs of the machine some tests drive (PgBouncer, HAProxy, podman): where one is missing, one line
// says so and those tests are skipped; under CI=true, where everything must run, it is an error.

/** Whether `file args` runs and exits 0. */
export function commandRuns(file: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  try {
    execFileSync(file, args, { env, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * True when `problem` is undefined; otherwise says that `tests` are skipped and how to get what is missing
 * (`remedy`), or throws under CI=true.
 */
export function toolReady(problem: string | undefined, tests: string, remedy: string): boolean {
  if (problem === undefined) return true;
  if (process.env.CI === 'true') throw new Error(`${problem}: under CI=true ${tests} must run (${remedy})`);
  console.warn(`${problem}: ${tests} are skipped (${remedy})`);
  return false;
}
