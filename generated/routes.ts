// Generated from generated/user-records.sandbox.yaml (the contract with its sandbox overlay) by `make generate` (openapi-generator, openapi/templates/index.mustache).
// Do not edit: change the contract or the template and regenerate.
import type { operations } from './sandbox-api.js';

/** The name of every operation in the contract and its sandbox variant. */
export type OperationId = keyof operations;

/** HTTP methods the contract uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** One operation of the contract: what the server binds and the client needs to know at run time. */
export interface RouteDefinition {
  readonly operationId: OperationId;
  readonly method: HttpMethod;
  /** Path template as written in the contract, e.g. `/users/{id}`. */
  readonly path: string;
  readonly pathParams: readonly string[];
  readonly queryParams: readonly string[];
  readonly hasBody: boolean;
  /** Media types the request body may be sent as; empty when the operation takes no body. */
  readonly bodyTypes: readonly string[];
  /** Names of the security schemes that guard the operation; empty when it is public. */
  readonly security: readonly string[];
}

/** Every operation of the contract, in the contract's order of tags and paths. */
export const routes = [
  {
    operationId: 'getHealth',
    method: 'GET',
    path: '/healthz',
    pathParams: [],
    queryParams: ['delay'],
    hasBody: false,
    bodyTypes: [],
    security: [],
  },
  {
    operationId: 'getMetrics',
    method: 'GET',
    path: '/metrics',
    pathParams: [],
    queryParams: ['delay'],
    hasBody: false,
    bodyTypes: [],
    security: [],
  },
  {
    operationId: 'getReadiness',
    method: 'GET',
    path: '/readyz',
    pathParams: [],
    queryParams: ['delay'],
    hasBody: false,
    bodyTypes: [],
    security: [],
  },
  {
    operationId: 'getDemoProtectedResource',
    method: 'GET',
    path: '/api/protected-resource',
    pathParams: [],
    queryParams: ['delay'],
    hasBody: false,
    bodyTypes: [],
    security: ['basic'],
  },
  {
    operationId: 'getProtectedResource',
    method: 'GET',
    path: '/protected-resource',
    pathParams: [],
    queryParams: ['delay'],
    hasBody: false,
    bodyTypes: [],
    security: ['basic'],
  },
  {
    operationId: 'resetSandbox',
    method: 'POST',
    path: '/__sandbox/reset',
    pathParams: [],
    queryParams: ['delay'],
    hasBody: true,
    bodyTypes: ['application/json'],
    security: [],
  },
  {
    operationId: 'createDemoUser',
    method: 'POST',
    path: '/api/users',
    pathParams: [],
    queryParams: ['delay'],
    hasBody: true,
    bodyTypes: ['application/json'],
    security: [],
  },
  {
    operationId: 'deleteDemoUser',
    method: 'DELETE',
    path: '/api/users/{id}',
    pathParams: ['id'],
    queryParams: ['delay'],
    hasBody: false,
    bodyTypes: [],
    security: [],
  },
  {
    operationId: 'getDemoUser',
    method: 'GET',
    path: '/api/users/{id}',
    pathParams: ['id'],
    queryParams: ['delay'],
    hasBody: false,
    bodyTypes: [],
    security: [],
  },
  {
    operationId: 'listDemoUsers',
    method: 'GET',
    path: '/api/users',
    pathParams: [],
    queryParams: ['page', 'per_page', 'q', 'email', 'sort', 'cursor', 'delay'],
    hasBody: false,
    bodyTypes: [],
    security: [],
  },
  {
    operationId: 'patchDemoUser',
    method: 'PATCH',
    path: '/api/users/{id}',
    pathParams: ['id'],
    queryParams: ['delay'],
    hasBody: true,
    bodyTypes: ['application/merge-patch+json', 'application/json'],
    security: [],
  },
  {
    operationId: 'replaceDemoUser',
    method: 'PUT',
    path: '/api/users/{id}',
    pathParams: ['id'],
    queryParams: ['delay'],
    hasBody: true,
    bodyTypes: ['application/json'],
    security: [],
  },
  {
    operationId: 'createUser',
    method: 'POST',
    path: '/users',
    pathParams: [],
    queryParams: ['delay'],
    hasBody: true,
    bodyTypes: ['application/json'],
    security: [],
  },
  {
    operationId: 'deleteUser',
    method: 'DELETE',
    path: '/users/{id}',
    pathParams: ['id'],
    queryParams: ['delay'],
    hasBody: false,
    bodyTypes: [],
    security: [],
  },
  {
    operationId: 'getUser',
    method: 'GET',
    path: '/users/{id}',
    pathParams: ['id'],
    queryParams: ['delay'],
    hasBody: false,
    bodyTypes: [],
    security: [],
  },
  {
    operationId: 'listUsers',
    method: 'GET',
    path: '/users',
    pathParams: [],
    queryParams: ['q', 'email', 'sort', 'limit', 'cursor', 'delay'],
    hasBody: false,
    bodyTypes: [],
    security: [],
  },
  {
    operationId: 'patchUser',
    method: 'PATCH',
    path: '/users/{id}',
    pathParams: ['id'],
    queryParams: ['delay'],
    hasBody: true,
    bodyTypes: ['application/merge-patch+json', 'application/json'],
    security: [],
  },
  {
    operationId: 'replaceUser',
    method: 'PUT',
    path: '/users/{id}',
    pathParams: ['id'],
    queryParams: ['delay'],
    hasBody: true,
    bodyTypes: ['application/json'],
    security: [],
  },
] as const satisfies readonly RouteDefinition[];

/** Operations that require credentials. */
export type SecuredOperationId = Extract<(typeof routes)[number], { security: readonly [string, ...string[]] }>['operationId'];
