// A steady stream of requests at a fixed rate, whatever the answers take: reads of users that exist, and creates
// that carry an Idempotency-Key, each counted as answered as expected or failed. What a rolling restart must
// serve without a failure (tests/system/topology.test.ts, tests/system/compose.test.ts).

export interface SteadyLoadOptions {
  /** Requests a second, started on time however many are still in flight. */
  readonly perSecond: number;
  /** Every this many requests, one is a create (the rest read). */
  readonly createEvery: number;
  /** Ids of users that exist, read in turn. */
  readonly readIds: readonly number[];
  /** Starts each create's key and address, so that a test finds them in the store. */
  readonly keyPrefix: string;
}

export interface SteadyLoadResult {
  readonly sent: number;
  readonly seconds: number;
  /** Each acknowledged create's key, and the id its 201 gave. */
  readonly acknowledged: ReadonlyMap<string, number>;
  /** Each request that was not answered 200 (a read) or 201 (a create): its key, and what came instead. */
  readonly failures: readonly string[];
}

export interface SteadyLoad {
  /** Stops sending, waits for every answer, and counts. */
  stop(): Promise<SteadyLoadResult>;
}

export function startSteadyLoad(url: string, options: SteadyLoadOptions): SteadyLoad {
  const failures: string[] = [];
  const acknowledged = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  let sent = 0;
  const one = async (n: number) => {
    const write = n % options.createEvery === 0;
    const key = `${options.keyPrefix}-${n}`;
    try {
      const response = await fetch(write ? `${url}/users` : `${url}/users/${options.readIds[n % options.readIds.length]}`, {
        method: write ? 'POST' : 'GET',
        headers: write ? { 'Content-Type': 'application/json', 'Idempotency-Key': key } : {},
        body: write ? JSON.stringify({ firstName: 'Steady', lastName: `Load${n}`, email: `${key}@example.com` }) : undefined,
      });
      const text = await response.text();
      const body = (response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as { id?: number };
      if (response.status !== (write ? 201 : 200)) failures.push(`${key}: ${response.status} ${JSON.stringify(body)}`);
      else if (write) acknowledged.set(key, body.id!);
    } catch (error) {
      failures.push(`${key}: ${(error as Error).message} ${String((error as { cause?: unknown }).cause)}`);
    }
  };
  const began = performance.now();
  const ticker = setInterval(() => {
    const due = Math.floor(((performance.now() - began) / 1000) * options.perSecond);
    while (sent < due) {
      const request = one(sent++);
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request));
    }
  }, 10);
  return {
    async stop() {
      clearInterval(ticker);
      await Promise.all([...inFlight]);
      return { sent, seconds: (performance.now() - began) / 1000, acknowledged, failures };
    },
  };
}
