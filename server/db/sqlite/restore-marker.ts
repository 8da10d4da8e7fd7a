import { existsSync } from 'node:fs';

// The marker a restore (restore.ts) leaves beside a store until the store is whole again, and the service's
// refusal to start on a store that has one.

/** A store whose restore began and did not finish: the service must not start on it. Its message is the line to show. */
export class UnfinishedRestore extends Error {
  override readonly name = 'UnfinishedRestore';
}

/** Where a restore into `filename` keeps what it must not lose until it is whole: the backup, and the highest id. */
export const restoreMarker = (filename: string) => `${filename}.restoring`;

export interface Marker {
  /** The backup being restored, as an absolute path. */
  readonly backup: string;
  /** The highest id the store had handed out before the restore began. */
  readonly highestId: number;
}

/**
 * Refuses a store whose restore has not finished (its marker is there): called once the store is open, so that a
 * restore that begins after this check finds the store held and refuses in turn.
 */
export function refuseUnfinishedRestore(filename: string): void {
  const marker = restoreMarker(filename);
  if (existsSync(marker))
    throw new UnfinishedRestore(
      `Could not start: a restore into ${filename} has not finished (${marker} is there). Run the restore again with the same backup to finish it.`,
    );
}
