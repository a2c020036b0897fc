#!/usr/bin/env node
// Thin launcher: the CLI is compiled to dist/ by `npm run build` (also run by `npm ci` via `prepare`).
import { installSignalHandlers, main } from '../dist/src/cli/main.js';

installSignalHandlers();
process.exitCode = await main(process.argv);
