import type { Logger } from '../logger.js';

/** Logs the migrations a start (or `npm run migrate`) applied, one line each. */
export function migrationLog(logger: Logger): (names: readonly string[]) => void {
  return (names) => {
    for (const name of names) logger.info({ migration: name }, 'applied a migration');
  };
}
