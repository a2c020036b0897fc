/** Writes the man page from the CLI's own command definitions: `npm run man` (man/mesh-audit.1). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { packageFile } from '../src/paths.js';
import { definedCli } from '../src/cli/commands.js';
import { MAN_PAGE_DATE, manPage } from '../src/cli/man.js';

const file = process.argv[2] ?? packageFile('man', 'mesh-audit.1');
const cli = await definedCli({
  now: () => new Date(),
  stdout: () => undefined,
  stderr: () => undefined,
  color: false,
  interactive: false,
});
const date = process.env['SOURCE_DATE_EPOCH']
  ? new Date(Number(process.env['SOURCE_DATE_EPOCH']) * 1000).toISOString().slice(0, 10)
  : MAN_PAGE_DATE;
mkdirSync(dirname(file), { recursive: true });
writeFileSync(file, manPage(cli, date));
console.log(`wrote ${file}`);
