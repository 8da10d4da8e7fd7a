// make dev: the server as make run starts it, built again and restarted whenever a source under server/ or
// generated/ changes. The build is the real one (tsc in watch mode, then the bundle and the contract's copy, as
// npm run build does): a change that does not compile is reported and leaves the last good server running.
// On a terminal the server's JSON log lines are shown by pino-pretty, one readable line each; piped elsewhere
// they pass through untouched. Ctrl-C (or SIGTERM) stops the server as a stop always does, then the watcher.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const say = (line) => process.stderr.write(`[dev] ${line}\n`);

/** Where the server's standard output goes: pino-pretty on a terminal, this process's own otherwise. */
async function logSink() {
  if (!process.stdout.isTTY) return undefined;
  const { default: pretty } = await import('pino-pretty');
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'service,pid,hostname', singleLine: false });
}

const sink = await logSink();
let server;
let stopping = false;

function startServer() {
  server = spawn('npm', ['start', '--silent'], { stdio: ['ignore', sink ? 'pipe' : 'inherit', 'inherit'] });
  if (sink) server.stdout.pipe(sink, { end: false });
  const self = server;
  self.once('exit', (code, signal) => {
    if (self === server && !stopping) say(`the server exited (${signal ?? code}); it starts again at the next change`);
  });
}

/** Stops the running server as a stop always does (SIGTERM: it answers what it had received), and waits. */
function stopServer() {
  const running = server;
  server = undefined;
  if (!running || running.exitCode !== null || running.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    running.once('exit', resolve);
    running.kill('SIGTERM');
  });
}

let rebuilding = Promise.resolve();
function restart() {
  rebuilding = rebuilding.then(async () => {
    try {
      await run('node', ['scripts/bundle.mjs']);
      await run('node', ['scripts/copy-contract.mjs']);
    } catch (error) {
      say(`the build failed; the last good server keeps running:\n${error.stderr || error.message}`);
      return;
    }
    const restarting = server !== undefined;
    await stopServer();
    if (stopping) return;
    say(restarting ? 'built: restarting the server' : 'built: starting the server');
    startServer();
  });
}

// tsc prints this line after each compile of the whole program, with the number of errors it found.
const COMPILED = /Found (\d+) errors?\. Watching for file changes\./;
const tsc = spawn('node_modules/.bin/tsc', ['-p', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
let pending = '';
tsc.stdout.on('data', (chunk) => {
  pending += chunk.toString();
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const compiled = COMPILED.exec(line);
    if (!compiled) {
      if (line.includes('error TS')) process.stderr.write(`${line}\n`);
      continue;
    }
    if (compiled[1] === '0') restart();
    else say(`${compiled[1]} compile error(s) above; the last good server keeps running`);
  }
});
tsc.once('exit', (code) => {
  if (!stopping) say(`tsc --watch exited (${code})`);
});
say('compiling server/ and generated/; watching them for changes');

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => {
    stopping = true;
    tsc.kill('SIGTERM');
    await rebuilding;
    await stopServer();
    process.exit(0);
  });
}
