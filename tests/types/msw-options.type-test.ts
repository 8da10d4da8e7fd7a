import type { setupServer } from 'msw/node';
import { unhandledRequests } from '../../client/src/msw.js';

// unhandledRequests takes MSW's strategies alone: a function has a different signature in msw 2 and msw 3.
// (tests/client/package.test.ts compiles its use on both majors.)

export function listen(server: ReturnType<typeof setupServer>): void {
  server.listen(unhandledRequests('error'));
  // @ts-expect-error MSW has no such strategy
  unhandledRequests('throw');
  // @ts-expect-error a callback is written under the installed major's own name
  unhandledRequests(() => undefined);
}
