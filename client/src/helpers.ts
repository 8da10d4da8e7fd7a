// What frontends do with the client again and again, each helper in a file of its own: read a list a page at a
// time (list-pages.ts), change a user without losing another client's change (change-user.ts), and in tests of
// the sandbox, ask chosen operations for an example answer (prefer-for.ts). Browser-safe.

export { UserRecordsProblem } from './helper-answers.js';
export { pages, readPage, type ListPath, type ListQuery, type Page, type PageLinks } from './list-pages.js';
export {
  changeUser,
  type ChangedUser,
  type ChangeUserOptions,
  type ChangeUserResult,
  type KnownUser,
  type UserConflict,
  type UserPath,
} from './change-user.js';
export { preferFor, type PreferenceOf, type Preferences, type SandboxOperation } from './prefer-for.js';
