// Ports for the processes tests start.
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** A port that was free a moment ago, for a process that cannot listen on port 0 and report the port it got. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Whether a listener can bind the port on 127.0.0.1 now. */
const canListen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });

/** Lowest port a slot is taken from: above the ports well-known services listen on. */
const SLOT_PORTS_FROM = 10_000;

/**
 * A free port for a slot that instances leave and take again (a rolling restart behind a proxy that knows the
 * slot by its port). Between two instances nobody holds it, so it is taken below the kernel's ephemeral range:
 * there no outgoing connection gets it as its local port and no listener on port 0 is given it, and only a
 * process that names it can take it.
 */
export async function slotPort(): Promise<number> {
  const [ephemeralFrom] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  if (!ephemeralFrom || ephemeralFrom <= SLOT_PORTS_FROM + 1_000)
    throw new Error(`the ephemeral range starts at ${ephemeralFrom}: no room for slot ports from ${SLOT_PORTS_FROM} below it`);
  for (let tries = 0; tries < 100; tries++) {
    const port = randomInt(SLOT_PORTS_FROM, ephemeralFrom);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port between ${SLOT_PORTS_FROM} and ${ephemeralFrom} in 100 tries`);
}
