/*
 * One worker of evaluate-workers.ts: loads the rules and the history once, then evaluates the snapshot
 * files it is sent, one at a time, and answers with each evaluation (or the error, as text).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { MeshAuditError } from '../errors.js';
import { auditSnapshot, rulesOf } from '../pipeline.js';
import { loadPolicies } from '../policy/load.js';
import { loadHistory } from '../snapshot/history.js';
import { historyReading } from '../acquire.js';
import { loadSnapshot } from '../snapshot/load.js';
import { withProblems } from '../snapshot/problems.js';
import type { WorkerAnswer, WorkerJob, WorkerSetup } from './evaluate-workers.js';

const setup = workerData as WorkerSetup;
const ready = (async () => {
  const rules = rulesOf(
    (await loadPolicies(setup.policies)).flatMap((p) => p.rules),
    setup.profile,
    setup.skip,
  );
  const history =
    setup.historyDir !== undefined
      ? await loadHistory(setup.historyDir, historyReading())
      : { snapshots: [], problems: [] };
  return { rules, history };
})();
// A setup that fails (a history folder that cannot be read) is answered to every job, as its error.
ready.catch(() => undefined);

parentPort!.on('message', (job: WorkerJob) => {
  void (async () => {
    let answer: WorkerAnswer;
    try {
      const { rules, history } = await ready;
      const snapshot = await loadSnapshot(job.path);
      const withHistoryProblems = withProblems(snapshot, history.problems);
      answer = {
        index: job.index,
        evaluation: auditSnapshot(withHistoryProblems, history.snapshots, rules, {
          recordChecks: setup.recordChecks === true,
          scoped: { scope: setup.scope, now: new Date(setup.now) },
        }),
      };
    } catch (err) {
      answer = { index: job.index, error: (err as Error).message, usage: err instanceof MeshAuditError };
    }
    parentPort!.postMessage(answer);
  })();
});
