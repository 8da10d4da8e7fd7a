import type { components } from '../../generated/api.js';
import type { ListedUser, UserFields } from '../domain/user.js';

type Schemas = components['schemas'];

/** A user in shape B. */
export const toLocalUser = (user: ListedUser): Schemas['User'] => ({
  id: user.id,
  firstName: user.firstName,
  lastName: user.lastName,
  email: user.email,
});

/** The stored fields for a shape B body, which already names them as the domain does. */
export const fromLocalUserInput = (input: Schemas['UserInput']): UserFields => ({
  firstName: input.firstName,
  lastName: input.lastName,
  email: input.email,
});

/** The stored fields a shape B merge patch changes: those it has. */
export const fromLocalUserPatch = (patch: Schemas['UserPatch']): Partial<UserFields> => ({
  ...(patch.firstName !== undefined ? { firstName: patch.firstName } : {}),
  ...(patch.lastName !== undefined ? { lastName: patch.lastName } : {}),
  ...(patch.email !== undefined ? { email: patch.email } : {}),
});
