import type { RouteDefinition } from '../../../generated/routes.js';
import type { Contract } from '../contract/contract.js';
import { HttpProblem } from '../errors/problem.js';

// Sandbox only: `Prefer: code=<status>[, example=<name>]` (RFC 7240), read as Prism reads it, answers the
// contract's example instead of running the operation, so that a frontend can show each error without
// producing it, and switch between Prism and the sandbox by base URL alone. Browser-safe: the MSW handlers
// answer Prefer with it too; sandbox-middleware.ts applies it in Koa.

/** One status an operation declares: its media type, its examples by name, and its headers' example values. */
interface DeclaredAnswer {
  readonly status: number;
  readonly mediaType: string | undefined;
  readonly examples: ReadonlyMap<string, unknown>;
  readonly headers: Readonly<Record<string, string>>;
}

interface RawResponse {
  content?: Record<string, { examples?: Record<string, unknown> }>;
}

/** The answers the contract declares for an operation, in the contract's order. */
function declaredAnswers(contract: Contract, route: RouteDefinition): DeclaredAnswer[] {
  const paths = contract.document.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>;
  const responses = paths[route.path]![route.method.toLowerCase()]!.responses;
  const declaredHeaders = contract.operation(route.operationId).responseHeaders;
  return Object.entries(responses).map(([status, raw]) => {
    const response = contract.resolve<RawResponse>(raw);
    const [mediaType, media] = Object.entries(response.content ?? {})[0] ?? [];
    const examples = new Map(Object.entries(media?.examples ?? {}).map(([name, example]) => [name, contract.resolve<{ value: unknown }>(example).value]));
    const headers: Record<string, string> = {};
    for (const [name, schema] of declaredHeaders.get(status) ?? []) {
      const { example } = schema as { example?: unknown };
      if (example !== undefined) headers[name] = String(example);
    }
    return { status: Number(status), mediaType, examples, headers };
  });
}

/** The `code` and `example` preferences of a Prefer header; other preferences (and parameters) are not ours. */
export function readPreferences(header: string): { code?: string; example?: string } {
  const found: { code?: string; example?: string } = {};
  for (const preference of header.split(',')) {
    const [token = '', value = ''] = preference
      .split(';')[0]!
      .split('=')
      .map((part) => part.trim());
    const unquoted = value.replace(/^"(.*)"$/, '$1');
    if (token.toLowerCase() === 'code') found.code = unquoted;
    if (token.toLowerCase() === 'example') found.example = unquoted;
  }
  return found;
}

const refusal = (message: string) => new HttpProblem('invalid-parameter', 'The header parameters are invalid.', { errors: [{ path: '/Prefer', message }] });

/** The answer a Prefer header asks for: status, headers (with `Preference-Applied`) and body, if any. */
export interface PreferredAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly mediaType?: string;
  readonly body?: string;
}

/**
 * Picks, for one operation, the example a Prefer header asks for: undefined when it asks for none (the
 * operation then runs); a 400 problem when it asks for a status or example the operation does not have.
 */
export function examplePicker(contract: Contract, route: RouteDefinition): (prefer: string) => PreferredAnswer | undefined {
  const answers = declaredAnswers(contract, route);
  const statuses = answers.map((answer) => answer.status).join(', ');
  const success = answers
    .filter((answer) => answer.status >= 200 && answer.status < 300)
    .sort((a, b) => a.status - b.status)
    .slice(0, 1);
  return (prefer) => {
    const { code, example } = readPreferences(prefer);
    if (code === undefined && example === undefined) return undefined;
    // Without a code, an example is looked for where Prism looks: in the success answer alone, so that a test
    // written against the sandbox asks Prism for the same thing.
    const candidates = code === undefined ? success : answers.filter((answer) => String(answer.status) === code);
    if (candidates.length === 0) throw refusal(`asks for status ${code}, which this operation does not declare (it declares ${statuses})`);
    const answer = example === undefined ? candidates[0]! : candidates.find((candidate) => candidate.examples.has(example));
    if (!answer) {
      const names = candidates.flatMap((candidate) => [...candidate.examples.keys()]).join(', ') || 'none';
      const elsewhere = answers.find((candidate) => candidate.examples.has(example!));
      const hint = code === undefined && elsewhere ? `; ask for code=${elsewhere.status}, example=${example}` : '';
      throw refusal(
        `asks for example ${example}, which ${code === undefined ? `the success answer (${success[0]?.status})` : `status ${code}`} does not have (it has ${names})${hint}`,
      );
    }
    const name = example ?? answer.examples.keys().next().value;
    const applied = name === undefined ? `code=${answer.status}` : `code=${answer.status}, example=${name}`;
    const headers = { ...answer.headers, 'Preference-Applied': applied };
    if (answer.mediaType === undefined || name === undefined) return { status: answer.status, headers };
    const value = answer.examples.get(name);
    return { status: answer.status, headers, mediaType: answer.mediaType, body: typeof value === 'string' ? value : JSON.stringify(value) };
  };
}
