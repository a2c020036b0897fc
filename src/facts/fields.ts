import type { SubjectSetName } from '../policy/types.js';

/**
 * The top-level fields each kind of subject offers to rules and message templates.
 * Kept beside the builders in subjects.ts; a test checks that the two agree.
 */
export const SUBJECT_FIELDS: Record<SubjectSetName, readonly string[]> = {
  containers: [
    'kind', 'id', 'host', 'name', 'container_id', 'image', 'status', 'running', 'network_mode', 'host_network',
    'labels', 'mesh', 'mesh_labelled', 'claimed_by', 'claimed', 'origins', 'holds', 'env', 'ports',
    'published_ports', 'listening', 'open_ports', 'exposed', 'exposure', 'exposed_endpoints', 'endpoints', 'proc_available', 'proc_reason',
    'formerly_claimed_by',
  ],
  files: [
    'kind', 'id', 'host', 'path', 'exists', 'file_kind', 'size', 'mode', 'uid', 'gid', 'mtime', 'inode', 'sha256',
    'link_target', 'error', 'is_env', 'env', 'managed_root', 'claimed_by', 'claimed', 'referenced_by', 'mounted_by',
    'formerly_claimed_by',
  ],
  ledger: [
    'kind', 'id', 'host', 'adopted', 'line', 'valid', 'errors', 'entry_id', 'type', 'target', 'origin', 'module', 'holds',
    'digest', 'sources', 'applied_at', 'extra', 'present', 'target_container', 'target_file', 'co_claimants',
    'former_targets',
  ],
  container_sources: ['kind', 'id', 'host', 'container', 'source', 'index', 'recorded_digest', 'named_by', 'dropped_keys', 'dropped_evidence'],
  mounts: ['kind', 'id', 'host', 'container', 'type', 'source', 'destination', 'rw', 'single_file', 'host_file', 'seen'],
  host: [
    'kind', 'id', 'host', 'hostname', 'node', 'adopted', 'complete', 'problems', 'docker_available',
    'ledger_available', 'container_count', 'file_count', 'ledger_count',
  ],
};
