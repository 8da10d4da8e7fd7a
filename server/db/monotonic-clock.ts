/**
 * Milliseconds on the machine's monotonic clock (CLOCK_MONOTONIC, through process.hrtime): the same clock in
 * every thread and process of the machine, and one that no change of the wall clock moves. A write's deadline
 * is set in the process that asks and checked in the writer thread, perhaps in another process.
 */
export const monotonicMs = (): number => Number(process.hrtime.bigint() / 1_000_000n);
