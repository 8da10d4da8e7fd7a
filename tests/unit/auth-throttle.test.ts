import { RateLimiterMemory } from 'rate-limiter-flexible';
import { createAuthThrottle } from '../../server/http/auth/auth-throttle.js';
import { CountsUnavailableError } from '../../server/http/limits/bounded-counter.js';
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
  const held = Array.from({ length: 2 }, () =>
    throttle.guard('client', 'alice', () => new Promise<boolean>((_resolve, reject) => refusals.push(reject)), isRight),
  );
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

/** Memory counters whose store stops answering the calls `failing` picks, as a shared store that fails or times out does. */
function counters(failing: (prefix: string, call: string) => boolean) {
  return (settings: LimiterSettings) => {
    const store = memoryCounters(settings);
    const answer = <T>(call: string, work: () => Promise<T>) => (failing(settings.keyPrefix, call) ? Promise.reject(new CountsUnavailableError()) : work());
    return {
      consume: (key: string) => answer('consume', () => store.consume(key)),
      get: (key: string) => answer('get', () => store.get(key)),
      penalty: (key: string) => answer('penalty', () => store.penalty(key)),
      reward: (key: string, points: number) => answer('reward', () => store.reward(key, points)),
      delete: (key: string) => answer('delete', () => store.delete(key)),
    };
  };
}

test('a count its store cannot answer refuses the attempt before any check; the count that answered gets its point back', async () => {
  let down = true;
  const throttle = createAuthThrottle(
    { maxFailures: 3, windowMs: 60_000 },
    counters((prefix, call) => down && prefix === 'auth-name' && call === 'consume'),
  );
  let checks = 0;
  const counted = () => {
    checks += 1;
    return wrong();
  };
  for (let i = 0; i < 5; i++) await expect(throttle.guard('client', 'alice', counted, isRight)).rejects.toBeInstanceOf(CountsUnavailableError);
  expect(checks).toBe(0);
  down = false;
  // The client's count took a point five times and gave each back: its budget is whole.
  expect(await guesses(throttle, 4)).toEqual([true, true, true, false]);
});

test('points its store cannot take back, and failures it cannot forgive, stay counted: fewer guesses, never more', async () => {
  let down = false;
  const throttle = createAuthThrottle(
    { maxFailures: 4, windowMs: 60_000 },
    counters((_prefix, call) => down && (call === 'reward' || call === 'delete')),
  );
  expect(await guesses(throttle, 2)).toEqual([true, true]);
  down = true;
  // The right credential is let in, though its forgiveness cannot be written.
  expect(await throttle.guard('client', 'alice', right, isRight)).toMatchObject({ checked: true, result: true });
  // An attempt the hash gate refused cannot give its point back.
  await expect(throttle.guard('client', 'alice', () => Promise.reject(new Error('refused by the hash gate')), isRight)).rejects.toThrow(
    'refused by the hash gate',
  );
  down = false;
  // Both kept their points: with the two failures, the budget of four is spent.
  expect(await guesses(throttle, 1)).toEqual([false]);
});

test('one client has at most its budget of attempts under way: one more is refused at once, before its store is asked', async () => {
  let consumes = 0;
  const throttle = createAuthThrottle(
    { maxFailures: 3, windowMs: 60_000 },
    counters((_prefix, call) => {
      if (call === 'consume') consumes++;
      return false;
    }),
  );
  const held: ((result: boolean) => void)[] = [];
  const under = Array.from({ length: 3 }, () => throttle.guard('client', 'alice', () => new Promise<boolean>((resolve) => held.push(resolve)), isRight));
  while (held.length < 3) await new Promise((resolve) => setImmediate(resolve));
  const asked = consumes;
  expect(await throttle.guard('client', 'alice', wrong, isRight)).toEqual({ checked: false, retryAfterSeconds: 1 });
  expect(consumes).toBe(asked);
  // Another client is not held back.
  expect(await throttle.guard('other', 'alice', wrong, isRight)).toMatchObject({ checked: true });
  for (const resolve of held) resolve(false);
  await Promise.all(under);
  // The three held were the client's budget.
  expect(await guesses(throttle, 1)).toEqual([false]);
});
