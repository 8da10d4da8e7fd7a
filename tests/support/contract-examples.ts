import { loadContract } from '../../server/http/contract/ajv-contract.js';
import type { Schema } from '../../server/http/contract/contract.js';
import { TEST_CREDENTIALS } from './test-server.js';

// The examples of the contract, with the request each names (x-request) or the condition it shows
// (x-condition): what Prism serves, what the sandbox answers to `Prefer`, and what a fresh server answers.

/** A request as `x-request` names it: `METHOD /path?query`, or with headers and a body. */
export type ExampleRequest =
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
      /** Sent to a server in sandbox mode (`SANDBOX=true`): the answers of the sandbox's own operations. */
      sandbox?: boolean;
    };

export interface Example {
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

// The sandbox variant: every example of the contract, and the sandbox's own (its reset's), which are replayed
// on a sandbox (`x-request` with `sandbox: true`).
export const contract = loadContract({ sandbox: true });
const document = contract.document as Record<string, any>;

export function collectExamples(): Example[] {
  const examples: Example[] = [];
  const add = (where: string, status: string, content: Record<string, any> | undefined) => {
    for (const [mediaType, media] of Object.entries(content ?? {})) {
      for (const [name, raw] of Object.entries((media.examples ?? {}) as Record<string, any>)) {
        const example = contract.resolve<Record<string, any>>(raw);
        examples.push({
          where,
          status,
          mediaType,
          name,
          schema: media.schema,
          value: example.value,
          request: example['x-request'],
          condition: example['x-condition'],
          excerpt: example['x-excerpt'] === true,
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

/** The requests an example names, in order. */
export const requestsOf = (example: Example): ExampleRequest[] =>
  example.request === undefined ? [] : Array.isArray(example.request) ? example.request : [example.request];

/** Whether an example shows what a server in sandbox mode answers (the MSW handlers answer the same). */
export const inSandbox = (example: Example): boolean => requestsOf(example).some((request) => typeof request === 'object' && request.sandbox === true);

/** The example's operation, status and name, as a test's title. */
export const exampleLabel = (example: Example) => `${example.where} ${example.status} ${example.name}`;

/** The fetch Request for an `x-request`, against a server at `baseUrl` started with user `admin`. */
export function exampleRequest(baseUrl: string, request: ExampleRequest): Request {
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
