import { readFileSync } from 'node:fs';
import { packageFile } from './paths.js';

export const TOOL_NAME = 'mesh-audit';
export const TOOL_VERSION: string = (JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version: string }).version;
export const TOOL_URI = 'https://github.com/mesh-audit/mesh-audit';
