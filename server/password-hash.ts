import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** A password stored as an scrypt hash: `scrypt$<N>$<r>$<p>$<salt base64>$<hash base64>`. */
export interface PasswordHash {
  readonly cost: number;
  readonly blockSize: number;
  readonly parallelization: number;
  readonly salt: Buffer;
  readonly hash: Buffer;
}

/** Cost parameters of new hashes: about 16 MiB and a few tens of milliseconds per check. */
export const DEFAULT_SCRYPT = { cost: 16384, blockSize: 8, parallelization: 1 } as const;

const FORMAT = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

function derive(password: string, salt: Buffer, length: number, params: Omit<PasswordHash, 'salt' | 'hash'>): Promise<Buffer> {
  const options: ScryptOptions = {
    N: params.cost,
    r: params.blockSize,
    p: params.parallelization,
    maxmem: 256 * params.cost * params.blockSize + 1024 * 1024,
  };
  return new Promise((resolve, reject) => scrypt(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))));
}

/** Parses a stored hash; undefined when the text is not one (or its parameters are unsafe or absurd). */
export function parsePasswordHash(text: string): PasswordHash | undefined {
  const match = FORMAT.exec(text);
  if (!match) return undefined;
  const [cost, blockSize, parallelization] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const salt = Buffer.from(match[4]!, 'base64');
  const hash = Buffer.from(match[5]!, 'base64');
  const powerOfTwo = cost > 1 && (cost & (cost - 1)) === 0;
  if (!powerOfTwo || cost < 1024 || cost > 1 << 20 || blockSize < 1 || blockSize > 32 || parallelization < 1 || parallelization > 16) return undefined;
  if (salt.length < 16 || hash.length < 32) return undefined;
  return { cost, blockSize, parallelization, salt, hash };
}

/** Hashes a password with a fresh random salt, in the text form parsePasswordHash reads. */
export async function hashPassword(password: string, params: Omit<PasswordHash, 'salt' | 'hash'> = DEFAULT_SCRYPT): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(password, salt, 32, params);
  return `scrypt$${params.cost}$${params.blockSize}$${params.parallelization}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

/** True when the password matches; the comparison takes the same time whatever the mismatch. */
export async function verifyPassword(password: string, stored: PasswordHash): Promise<boolean> {
  const candidate = await derive(password, stored.salt, stored.hash.length, stored);
  return timingSafeEqual(candidate, stored.hash);
}
