import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { CONTRACT_FILE, loadContract, toFieldErrors, type Schema } from '../../server/http/contract/contract.js';
import { HttpProblem, problemDocument, type ProblemKind } from '../../server/http/errors/problem.js';
import { startTestServer, TEST_CREDENTIALS } from '../support/test-server.js';

// The contract's examples are what Prism serves to frontend teams, and what /docs shows: each must be valid
// against its schema, and each must be what a fresh server (the 12 demo users) answers to the request it
// names in `x-request`. An example that no single request on a fresh server produces (a store outage, a full
// queue) names its condition in `x-condition` instead, from the short list below.

/** A request as `x-request` names it: `METHOD /path?query`, or with headers and a body. */
type ExampleRequest =
  | string
  | {
      method: string;
      path: string;
      headers?: Record<string, string>;
      /** JSON, sent as application/json. */
      body?: unknown;
      /** Sent as it is (application/json unless `headers` say otherwise). */
      rawBody?: string;
      /** A JSON string of this many bytes. */
      bodyBytes?: number;
      /** Basic credentials: the server's user with its password (`admin`), or with a wrong one (`wrong`). */
      credentials?: 'admin' | 'wrong';
    };

interface Example {
  readonly where: string;
  readonly status: string;
  readonly mediaType: string;
  readonly schema: Schema;
  readonly name: string;
  readonly value: unknown;
  readonly request?: ExampleRequest | ExampleRequest[];
  readonly condition?: string;
  /** The example is some lines of a longer text answer (the metrics). */
  readonly excerpt?: boolean;
}

/**
 * Conditions that need more than one request on a fresh server, or a broken store: each is tested where it is
 * built (the file named), and its example is checked here against the problem catalogue.
 */
const CONDITIONS: Record<string, ProblemKind> = {
  'store-down': 'store-unavailable', // tests/system/postgres-faults.test.ts, sqlite-disk-full.test.ts
  'searches-busy': 'searches-busy', // tests/system/long-work.test.ts
  'too-many-connections': 'too-many-connections', // tests/system/hostile-clients.test.ts
  'too-many-writes': 'too-many-writes', // tests/component/write-limit.test.ts
  'too-many-attempts': 'too-many-attempts', // tests/component/brute-force.test.ts
  'credential-checks-busy': 'credential-checks-busy', // tests/component/credential-flood.test.ts
  'idempotency-key-in-flight': 'idempotency-key-in-flight', // tests/component/idempotency.test.ts
  'metrics-unavailable': 'metrics-unavailable', // tests/system/cluster-metrics.test.ts
};

const contract = loadContract();
// Read again without the service's index, so that the examples and their extensions are all here.
const document = parse(readFileSync(CONTRACT_FILE, 'utf8')) as Record<string, any>;

function collectExamples(): Example[] {
  const examples: Example[] = [];
  const add = (where: string, status: string, content: Record<string, any> | undefined) => {
    for (const [mediaType, media] of Object.entries(content ?? {})) {
      for (const [name, raw] of Object.entries((media.examples ?? {}) as Record<string, any>)) {
        const example = contract.resolve<Record<string, any>>(raw);
        examples.push({
          where, status, mediaType, name, schema: media.schema, value: example.value,
          request: example['x-request'], condition: example['x-condition'], excerpt: example['x-excerpt'] === true,
        });
      }
    }
  };
  for (const [path, item] of Object.entries(document.paths as Record<string, any>)) {
    for (const [method, operation] of Object.entries(item as Record<string, any>)) {
      if (method === 'parameters') continue;
      const where = `${method.toUpperCase()} ${path}`;
      if (operation.requestBody) add(`${where} request body`, 'request', contract.resolve<any>(operation.requestBody).content);
      for (const [status, response] of Object.entries(operation.responses as Record<string, unknown>)) {
        add(where, status, contract.resolve<any>(response).content);
      }
    }
  }
  return examples;
}

const examples = collectExamples();
const answers = examples.filter((example) => example.status !== 'request');
const label = (example: Example) => `${example.where} ${example.status} ${example.name}`;

test('the contract has examples of every kind this test reads', () => {
  expect(answers.filter((example) => example.request).length).toBeGreaterThan(50);
  expect(answers.filter((example) => example.condition).length).toBeGreaterThan(10);
});

test.each(examples.map((example) => [label(example), example] as const))('%s is valid against its schema', (_label, example) => {
  const validate = contract.compile(example.schema);
  expect(toFieldErrors(validate(example.value) ? [] : validate.errors)).toEqual([]);
});

test.each(answers.map((example) => [label(example), example] as const))('%s names the request or the condition it shows', (_label, example) => {
  expect([example.request !== undefined, example.condition !== undefined].filter(Boolean)).toHaveLength(1);
  if (example.condition !== undefined) expect(Object.keys(CONDITIONS)).toContain(example.condition);
});

const conditioned = answers.filter((example) => example.condition !== undefined);
test.each(conditioned.map((example) => [label(example), example] as const))('%s has the type, title and status the service gives its condition', (_label, example) => {
  const value = example.value as { detail: string; instance?: string };
  const { status, body } = problemDocument(new HttpProblem(CONDITIONS[example.condition!]!, value.detail), value.instance);
  expect(String(status)).toBe(example.status);
  expect(JSON.parse(body)).toEqual(example.value);
});

function toRequest(baseUrl: string, request: ExampleRequest): Request {
  const spec = typeof request === 'string' ? { method: request.split(' ')[0]!, path: request.split(' ')[1]! } : request;
  const headers = new Headers(spec.headers);
  if (spec.credentials) {
    const password = spec.credentials === 'admin' ? TEST_CREDENTIALS.password : 'not the password';
    headers.set('authorization', `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`);
  }
  let body: string | undefined;
  if (spec.body !== undefined) body = JSON.stringify(spec.body);
  if (spec.rawBody !== undefined) body = spec.rawBody;
  if (spec.bodyBytes !== undefined) body = `"${'a'.repeat(spec.bodyBytes - 2)}"`;
  if (body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  return new Request(`${baseUrl}${spec.path}`, { method: spec.method, headers, body });
}

/** A sample value of the metrics text, which differs from run to run. */
const withoutSampleValue = (line: string) => line.replace(/ [0-9.e+-]+$/, ' <value>');

const reproducible = answers.filter((example) => example.request !== undefined);
test.each(reproducible.map((example) => [label(example), example] as const))('%s is what a fresh server answers', async (_label, example) => {
  // Each on a store of its own: examples that create or change users must each find the demo data as it was.
  const server = await startTestServer({ env: { BASIC_AUTH_USERNAME: 'admin' } });
  try {
    const requests = Array.isArray(example.request) ? example.request : [example.request!];
    let response!: Response;
    for (const request of requests) response = await fetch(toRequest(server.url, request));
    expect(String(response.status)).toBe(example.status);
    expect(response.headers.get('content-type')?.split(';')[0]).toBe(example.mediaType);
    if (example.mediaType === 'text/plain') {
      const text = await response.text();
      if (!example.excerpt) return expect(text).toBe(example.value);
      const lines = new Set(text.split('\n').map(withoutSampleValue));
      for (const line of (example.value as string).trimEnd().split('\n')) expect(lines).toContain(withoutSampleValue(line));
      return;
    }
    const body = await response.json();
    // Timestamps are the moment of the request; the example shows one moment.
    for (const stamp of ['createdAt', 'updatedAt']) if (typeof body[stamp] === 'string' && !Number.isNaN(Date.parse(body[stamp]))) body[stamp] = (example.value as Record<string, unknown>)[stamp];
    expect(body).toEqual(example.value);
  } finally {
    await server.cleanup();
  }
});
