// Imported by every entry point that reads settings (the service, migrate, backup and restore), after the Node
// check, for its effect: the settings of `.env` in the working directory, or of the file ENV_FILE names
// (ENV_FILE= empty: none), each filling a variable the environment leaves unset. The environment always wins,
// as with dotenv, Node's --env-file and compose. The file is Node's own format (NAME=value lines, # comments,
// quoted values); a file ENV_FILE names that cannot be read is one line and exit 1, a missing .env is none.

const named = process.env.ENV_FILE;
const file = named ?? '.env';
if (file !== '') {
  try {
    process.loadEnvFile(file);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    if (named !== undefined || code !== 'ENOENT') {
      process.stderr.write(`Could not read the settings file ${file} (ENV_FILE): ${message}\n`);
      process.exit(1);
    }
  }
}
