import type { components } from '../../generated/api.js';
import { fullNameOf, splitFullName, type ListedUser, type User, type UserFields, type UserPage } from '../domain/user.js';

type Schemas = components['schemas'];

/** A user in shape A, as GET shows it. */
export const toDemoUser = (user: ListedUser): Schemas['DemoUser'] => ({
  id: user.id,
  email: user.email,
  first_name: user.firstName,
  last_name: user.lastName,
});

/** A page of users in shape A. */
export const toDemoUserPage = (page: UserPage): Schemas['DemoUserPage'] => ({
  page: page.page,
  per_page: page.perPage,
  total: page.total,
  total_pages: page.totalPages,
  data: page.users.map(toDemoUser),
});

/** The stored fields for a shape A body: the full name split into first and last. */
export const fromDemoUserInput = (input: Schemas['DemoUserInput']): UserFields => ({
  ...splitFullName(input.name),
  email: input.email,
});

/** The create response: `name` and `email` exactly as submitted. */
export const toDemoUserCreated = (user: User, input: Schemas['DemoUserInput']): Schemas['DemoUserCreated'] => ({
  id: user.id,
  name: input.name,
  email: input.email,
  createdAt: user.createdAt,
});

/** The replace response: `name` and `email` exactly as submitted. */
export const toDemoUserReplaced = (user: User, input: Schemas['DemoUserInput']): Schemas['DemoUserReplaced'] => ({
  id: user.id,
  name: input.name,
  email: input.email,
  updatedAt: user.updatedAt,
});

/** The stored fields a shape A merge patch changes: the full name, split, and the e-mail address, when given. */
export const fromDemoUserPatch = (patch: Schemas['DemoUserPatch']): Partial<UserFields> => ({
  ...(patch.name !== undefined ? splitFullName(patch.name) : {}),
  ...(patch.email !== undefined ? { email: patch.email } : {}),
});

/** The patch response, as a replace's: `name` and `email` as submitted, or as stored when not given. */
export const toDemoUserPatched = (user: User, patch: Schemas['DemoUserPatch']): Schemas['DemoUserReplaced'] => ({
  id: user.id,
  name: patch.name ?? fullNameOf(user),
  email: patch.email ?? user.email,
  updatedAt: user.updatedAt,
});
