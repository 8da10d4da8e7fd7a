// What frontends do with the client again and again, each helper in a file of its own: read a list a page at a
// time (list-pages.ts), and change a user without losing another client's change (change-user.ts). Browser-safe.

export { UserRecordsProblem } from './helper-answers.js';
export { pages, readPage, type ListPath, type ListQuery, type Page, type PageLinks } from './list-pages.js';
export { changeUser, type ChangedUser, type UserPath } from './change-user.js';
