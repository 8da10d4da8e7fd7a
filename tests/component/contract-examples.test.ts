import { loadContract } from '../../server/http/contract/ajv-contract.js';
import { toFieldErrors } from '../../server/http/contract/contract.js';
import { HttpProblem, problemDocument, type ProblemKind } from '../../server/http/errors/problem.js';
import { collectExamples, contract, exampleLabel, exampleRequest, inSandbox, requestsOf } from '../support/contract-examples.js';
import { startTestServer, TEST_CREDENTIALS } from '../support/test-server.js';

// The contract's examples are what Prism serves to frontend teams, and what /docs shows: each must be valid
// against its schema, and each must be what a fresh server (the 12 demo users) answers to the request it
// names in `x-request`. An example that no single request on a fresh server produces (a store outage, a full
// queue) names its condition in `x-condition` instead, from the short list below.

/**
 * Conditions that need more than one request on a fresh server, or a broken store: each is tested where it is
 * built (the file named), and its example is checked here against the problem catalogue.
 */
const CONDITIONS: Record<string, ProblemKind> = {
  'store-down': 'store-unavailable', // tests/system/postgres-faults.test.ts, sqlite-disk-full.test.ts
  'write-outcome-unknown': 'write-outcome-unknown', // tests/system/write-outcomes.test.ts, slow-disk.test.ts
  'searches-busy': 'searches-busy', // tests/system/long-work.test.ts
  'too-many-connections': 'too-many-connections', // tests/system/hostile-clients.test.ts
  'too-many-writes': 'too-many-writes', // tests/component/write-limit.test.ts
  'too-many-attempts': 'too-many-attempts', // tests/component/brute-force.test.ts
  'credential-checks-busy': 'credential-checks-busy', // tests/component/credential-flood.test.ts
  'credential-counts-unavailable': 'credential-checks-busy', // tests/system/shared-limits-faults.test.ts
  'idempotency-key-in-flight': 'idempotency-key-in-flight', // tests/component/idempotency.test.ts
  'metrics-unavailable': 'metrics-unavailable', // tests/system/cluster-metrics.test.ts
  'internal-error': 'internal-error', // tests/component/http-errors.test.ts (a store whose table is gone)
  // Answers written before any operation is chosen, shared by every operation (they name no instance).
  'not-http': 'bad-request', // tests/component/http-errors.test.ts
  'request-too-slow': 'request-timeout', // tests/system/slow-clients.test.ts
  'unmet-expectation': 'expectation-failed', // tests/component/http-errors.test.ts
  'head-too-large': 'headers-too-large', // tests/component/http-errors.test.ts
  // A Host header fetch() cannot send.
  'foreign-host': 'misdirected-request', // tests/component/allowed-hosts.test.ts
};

const examples = collectExamples();
const answers = examples.filter((example) => example.status !== 'request');

test('the contract has examples of every kind this test reads', () => {
  expect(answers.filter((example) => example.request).length).toBeGreaterThan(50);
  expect(answers.filter((example) => example.condition).length).toBeGreaterThan(10);
});

test('every answer the contract declares with a body has an example to serve (Prism, the sandbox)', () => {
  const withBody = new Set<string>();
  for (const [path, item] of Object.entries(contract.document.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (method === 'parameters') continue;
      for (const [status, response] of Object.entries(operation.responses as Record<string, unknown>)) {
        const content = contract.resolve<{ content?: object }>(response).content;
        if (content) withBody.add(`${method.toUpperCase()} ${path} ${status}`);
      }
    }
  }
  const exampled = new Set(answers.map((example) => `${example.where} ${example.status}`));
  expect([...withBody].filter((answer) => !exampled.has(answer))).toEqual([]);
});

test.each(examples.map((example) => [exampleLabel(example), example] as const))('%s is valid against its schema', (_label, example) => {
  const validate = contract.compile(example.schema);
  expect(toFieldErrors(validate(example.value) ? [] : validate.errors)).toEqual([]);
});

test.each(answers.map((example) => [exampleLabel(example), example] as const))('%s names the request or the condition it shows', (_label, example) => {
  expect([example.request !== undefined, example.condition !== undefined].filter(Boolean)).toHaveLength(1);
  if (example.condition !== undefined) expect(Object.keys(CONDITIONS)).toContain(example.condition);
});

const conditioned = answers.filter((example) => example.condition !== undefined);
test.each(conditioned.map((example) => [exampleLabel(example), example] as const))(
  '%s has the type, title and status the service gives its condition',
  (_label, example) => {
    const value = example.value as { detail: string; instance?: string };
    const { status, body } = problemDocument(new HttpProblem(CONDITIONS[example.condition!]!, value.detail), value.instance);
    expect(String(status)).toBe(example.status);
    expect(JSON.parse(body)).toEqual(example.value);
  },
);

/** A sample value of the metrics text, which differs from run to run. */
const withoutSampleValue = (line: string) => line.replace(/ [0-9.e+-]+$/, ' <value>');

const reproducible = answers.filter((example) => example.request !== undefined);
test.each(reproducible.map((example) => [exampleLabel(example), example] as const))('%s is what a fresh server answers', async (_label, example) => {
  // Each on a store of its own: examples that create or change users must each find the demo data as it was.
  const sandbox: Record<string, string> = inSandbox(example) ? { SANDBOX: 'true', DATABASE_URL: 'sqlite::memory:' } : {};
  const server = await startTestServer({ env: { BASIC_AUTH_USERNAME: 'admin', ...sandbox } });
  try {
    let response!: Response;
    for (const request of requestsOf(example)) response = await fetch(exampleRequest(server.url, request));
    expect(String(response.status)).toBe(example.status);
    expect(response.headers.get('content-type')).toBe(example.mediaType);
    if (example.mediaType.startsWith('text/plain')) {
      const text = await response.text();
      if (!example.excerpt) return expect(text).toBe(example.value);
      const lines = new Set(text.split('\n').map(withoutSampleValue));
      for (const line of (example.value as string).trimEnd().split('\n')) expect(lines).toContain(withoutSampleValue(line));
      return;
    }
    const body = await response.json();
    // Timestamps are the moment of the request; the example shows one moment.
    for (const stamp of ['createdAt', 'updatedAt'])
      if (typeof body[stamp] === 'string' && !Number.isNaN(Date.parse(body[stamp]))) body[stamp] = (example.value as Record<string, unknown>)[stamp];
    expect(body).toEqual(example.value);
  } finally {
    await server.cleanup();
  }
});

// The other direction: what the contract offers a client to send. Each request example (a body's examples, a
// required parameter's `example`, and the example an optional parameter gives in words, "For example `x`")
// must be something a fresh server does what it says with: tools (Schemathesis, Dredd, Swagger UI's Try it
// out) send them as they are, and a reader copies them.

interface OfferedRequest {
  readonly label: string;
  readonly request: Request;
  /** What the example shows: success, or for a conditional GET that the copy is current. */
  readonly expected: readonly number[];
}

/** "For example `x`" in a parameter's description: the example it gives in words. */
const exampleInWords = (description: string | undefined) => /For example `([^`]+)`/.exec(description ?? '')?.[1];

/** The production contract: what a client of a server not in sandbox mode may send. */
const production = loadContract();

function offeredRequests(baseUrl: string): OfferedRequest[] {
  const offered: OfferedRequest[] = [];
  for (const [path, item] of Object.entries(production.document.paths as Record<string, Record<string, any>>)) {
    for (const [method, raw] of Object.entries(item)) {
      if (method === 'parameters') continue;
      // Operators' operations are not the API a client calls.
      if (production.operation(raw.operationId).tags.includes('operations')) continue;
      const parameters = [...((item.parameters ?? []) as unknown[]), ...((raw.parameters ?? []) as unknown[])].map((p) =>
        production.resolve<Record<string, any>>(p),
      );
      const required = parameters.filter((p) => p.required);
      const target = path.replace(/\{(\w+)\}/g, (_all, name: string) => String(required.find((p) => p.name === name)!.example));
      const body = raw.requestBody ? production.resolve<Record<string, any>>(raw.requestBody).content : undefined;
      const bodies: [string, string, unknown][] = body
        ? Object.entries(body as Record<string, any>).flatMap(([type, media]) =>
            Object.entries((media.examples ?? {}) as Record<string, any>).map(
              ([name, example]) => [`${type} ${name}`, type, production.resolve<{ value: unknown }>(example).value] as [string, string, unknown],
            ),
          )
        : [['no body', '', undefined]];
      const credentials: Record<string, string> = raw.security?.length
        ? { authorization: `Basic ${Buffer.from(`admin:${TEST_CREDENTIALS.password}`).toString('base64')}` }
        : {};
      const make = (
        label: string,
        query: Record<string, string>,
        headers: Record<string, string>,
        [bodyLabel, type, value]: [string, string, unknown],
        expected: readonly number[],
      ) => {
        const url = new URL(`${baseUrl}${target}`);
        for (const [name, text] of Object.entries(query)) url.searchParams.set(name, text);
        offered.push({
          label: `${method.toUpperCase()} ${path} ${bodyLabel}${label}`,
          request: new Request(url, {
            method: method.toUpperCase(),
            headers: { ...credentials, ...headers, ...(type ? { 'content-type': type } : {}) },
            body: value === undefined ? undefined : JSON.stringify(value),
          }),
          expected,
        });
      };
      for (const example of bodies) make('', {}, {}, example, [200, 201, 204]);
      for (const parameter of parameters.filter((p) => !p.required)) {
        const text = exampleInWords(parameter.description);
        if (text === undefined) continue;
        const label = `, ${parameter.name}: ${text}`;
        // A conditional GET with a fresh user's ETag is answered "not modified": what the example is for.
        const expected = parameter.name === 'If-None-Match' ? [304] : [200, 201, 204];
        make(
          label,
          parameter.in === 'query' ? { [parameter.name]: text } : {},
          parameter.in === 'header' ? { [parameter.name]: text } : {},
          bodies[0]!,
          expected,
        );
      }
    }
  }
  return offered;
}

test('every request example of the contract does what it says on a fresh server: bodies, required parameters, and optional ones in words', async () => {
  const failures: string[] = [];
  let count = 0;
  for (let index = 0; ; index++) {
    // A server of its own for each: a create, a change or a delete must find the demo data as it was.
    const server = await startTestServer({ env: { BASIC_AUTH_USERNAME: 'admin' } });
    try {
      const offered = offeredRequests(server.url);
      if (index >= offered.length) break;
      const { label, request, expected } = offered[index]!;
      const response = await fetch(request);
      count++;
      if (!expected.includes(response.status)) failures.push(`${label}: ${response.status} ${await response.text()}`);
    } finally {
      await server.cleanup();
    }
  }
  expect(count).toBeGreaterThan(20);
  expect(failures).toEqual([]);
}, 120_000);
