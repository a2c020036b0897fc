/*
 * The Compose worker of compose-pool.ts: reads the Compose files it is sent (their bytes) as the main
 * thread would (compose-file.ts) and answers with their facts: key names only, never a value.
 */
import { parentPort } from 'node:worker_threads';
import { composeFacts } from './compose-file.js';
import type { ComposeRequest, ComposeAnswer } from './compose-pool.js';

parentPort!.on('message', ({ files }: ComposeRequest) => {
  const answer: ComposeAnswer = { answers: files.map(({ id, content }) => ({ id, facts: composeFacts(content) })) };
  parentPort!.postMessage(answer);
});
