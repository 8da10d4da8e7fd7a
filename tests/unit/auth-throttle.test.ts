import { RateLimiterMemory } from 'rate-limiter-flexible';
import { createAuthThrottle } from '../../server/http/auth/auth-throttle.js';
import type { LimiterSettings } from '../../server/http/limits/limiter-store.js';

// The brute-force guard's counts under attempts that overlap, with the counters a single process uses
// (rate-limiter-flexible's memory limiter) and checks that the test holds until the moment it wants.

const memoryCounters = ({ keyPrefix, points, durationSeconds }: LimiterSettings) => new RateLimiterMemory({ keyPrefix, points, duration: durationSeconds });
const right = async () => true;
const wrong = async () => false;
const isRight = (result: boolean) => result;

/** Whether each of `count` wrong guesses in a row was checked (true) or refused before any check (false). */
async function guesses(throttle: ReturnType<typeof createAuthThrottle>, count: number): Promise<boolean[]> {
  const checked: boolean[] = [];
  for (let guess = 0; guess < count; guess++) checked.push((await throttle.guard('client', 'alice', wrong, isRight)).checked);
  return checked;
}

test('a point given back after the client was forgiven is no extra guess', async () => {
  const throttle = createAuthThrottle({ maxFailures: 3, windowMs: 60_000 }, memoryCounters);
  // An attempt whose check never happens (the hash gate refused it) holds its point meanwhile...
  let refuse: ((error: Error) => void) | undefined;
  const held = throttle.guard('client', 'alice', () => new Promise<boolean>((_resolve, reject) => (refuse = reject)), isRight);
  while (refuse === undefined) await new Promise((resolve) => setImmediate(resolve));
  // ...while a right login forgives the client (its counts are deleted)...
  expect(await throttle.guard('client', 'alice', right, isRight)).toMatchObject({ checked: true, result: true });
  // ...and then gives its point back: to counts that no longer hold it.
  refuse(new Error('refused by the hash gate'));
  await expect(held).rejects.toThrow('refused by the hash gate');
  // The budget is what it was: three wrong guesses, then refusals. Given back to a deleted count, the point
  // made it -1 and a fourth guess was checked.
  expect(await guesses(throttle, 5)).toEqual([true, true, true, false, false]);
});

test('points given back by many attempts around a forgiveness leave the budget as it was', async () => {
  const throttle = createAuthThrottle({ maxFailures: 3, windowMs: 60_000 }, memoryCounters);
  const refusals: ((error: Error) => void)[] = [];
  const held = Array.from({ length: 2 }, () => throttle.guard('client', 'alice', () => new Promise<boolean>((_resolve, reject) => refusals.push(reject)), isRight));
  while (refusals.length < 2) await new Promise((resolve) => setImmediate(resolve));
  expect(await throttle.guard('client', 'alice', right, isRight)).toMatchObject({ checked: true });
  for (const refuse of refusals) refuse(new Error('refused by the hash gate'));
  await Promise.allSettled(held);
  expect(await guesses(throttle, 5)).toEqual([true, true, true, false, false]);
});

test('a point given back to a count that still holds it frees a guess', async () => {
  const throttle = createAuthThrottle({ maxFailures: 3, windowMs: 60_000 }, memoryCounters);
  expect(await guesses(throttle, 2)).toEqual([true, true]);
  let refuse: ((error: Error) => void) | undefined;
  const held = throttle.guard('client', 'alice', () => new Promise<boolean>((_resolve, reject) => (refuse = reject)), isRight);
  while (refuse === undefined) await new Promise((resolve) => setImmediate(resolve));
  refuse(new Error('refused by the hash gate'));
  await expect(held).rejects.toThrow();
  expect(await guesses(throttle, 2)).toEqual([true, false]);
});
