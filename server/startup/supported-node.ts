// Imported first by every entry point (the service and its command-line tools), for its effect: on a Node
// older than the service supports, one line naming both versions, and exit 1, before anything native loads.
// better-sqlite3 is compiled for the Node that installed it; another major ends the process in a segmentation
// fault, with no word of why.

/** The oldest Node major the service supports: package.json's `engines`. */
export const OLDEST_NODE_MAJOR = 22;

const found = process.versions.node;
if (Number(found.split('.')[0]) < OLDEST_NODE_MAJOR) {
  process.stderr.write(
    `Could not start: this needs Node ${OLDEST_NODE_MAJOR} or newer, and ${process.execPath} is Node ${found}. Run it through make (make start, migrate, backup, restore, hash-password), which uses the Node that .node-version pins.\n`,
  );
  process.exit(1);
}
