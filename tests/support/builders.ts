let sequence = 0;
const next = () => `${process.pid}-${++sequence}`;

/** A valid shape A body with unique values; override any member. */
export function buildDemoUserInput(overrides: Partial<{ name: string; email: string }> = {}) {
  const n = next();
  return { name: `Tess Tester${n}`, email: `tess.${n}@example.com`, ...overrides };
}

/** A valid shape B body with unique values; override any member. */
export function buildUserInput(overrides: Partial<{ firstName: string; lastName: string; email: string }> = {}) {
  const n = next();
  return { firstName: 'Lena', lastName: `Local${n}`, email: `lena.${n}@example.com`, ...overrides };
}
