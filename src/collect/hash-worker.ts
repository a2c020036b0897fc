/*
 * A hashing worker of hash-pool.ts: reads the large files it is sent with the same checked read as
 * the main thread (read-file.ts) and answers with their digest. Nothing else.
 */
import { parentPort } from 'node:worker_threads';
import { readRegularFile } from './read-file.js';
import type { HashRequest, HashAnswer } from './hash-pool.js';

parentPort!.on('message', (request: HashRequest) => {
  const answer: HashAnswer = {
    id: request.id,
    result: readRegularFile(request.fsPath, {
      dev: request.dev,
      ino: request.ino,
      size: request.size,
      isFile: () => true,
    }),
  };
  parentPort!.postMessage(answer);
});
