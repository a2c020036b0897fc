import type { ImageRecord, Snapshot } from '../snapshot/types.js';
import { normalImageId } from '../snapshot/image-id.js';
import type { Joins } from './joins.js';
import type { BuiltContainer } from './containers.js';
import { subjectFactory, type Subject } from '../policy/subject.js';
import type { ImageData } from '../policy/subject-data.js';

const IMAGES = subjectFactory('images');

const shortOf = (id: string): string => id.replace(/^sha256:/, '').slice(0, 12);

/**
 * The `images` set (snapshot@2): each image a container uses, with the containers using it. When the images
 * were not read, a set of things that may exist is not known: it stands as one subject, wholly unknown, on which
 * every rule on images is not checked, and the run says so (never an empty set passing for none).
 */
export function buildImages(
  snapshot: Snapshot,
  containers: readonly BuiltContainer[],
  joins: Joins,
): Subject<ImageData>[] {
  const { images } = snapshot;
  if (!images.available || snapshot.docker === null)
    return [imagesNotRead(images.available ? 'the Docker engine was not read' : images.reason, joins.host)];
  const tagged = new Set(Object.values(images.tags).map(normalImageId));
  const usersOf = usersByImage(containers);
  return images.images.map((image) => imageSubject(image, usersOf, tagged, joins));
}

/** The one subject standing for the images when they were not read: wholly unknown. */
function imagesNotRead(reason: string, host: string): Subject<ImageData> {
  const id = 'images not read';
  return IMAGES.subject({
    id,
    data: { kind: 'image', id, host } as ImageData,
    unknown: IMAGES.wholly('images', reason),
    locate: () => ({
      physical: [],
      logical: [{ kind: 'image', name: id, fullyQualifiedName: `${host}/images/${id}` }],
    }),
    resource: null,
    module: null,
  });
}

/**
 * The containers of each image, grouped once (one pass over the containers per image was quadratic:
 * 2 s for 10,000 containers of 2,500 images).
 */
function usersByImage(containers: readonly BuiltContainer[]): Map<string, BuiltContainer[]> {
  const usersOf = new Map<string, BuiltContainer[]>();
  for (const c of containers) {
    const id = normalImageId(c.container.imageId ?? '');
    const users = usersOf.get(id);
    if (users === undefined) usersOf.set(id, [c]);
    else users.push(c);
  }
  return usersOf;
}

/** One image's subject: its facts, with who uses it unknown while the containers or the ledger were not all read. */
function imageSubject(
  image: ImageRecord,
  usersOf: ReadonlyMap<string, BuiltContainer[]>,
  tagged: ReadonlySet<string>,
  joins: Joins,
): Subject<ImageData> {
  const id = normalImageId(image.id);
  const users = usersOf.get(id) ?? [];
  const check = image.healthcheck;
  const data: ImageData = {
    kind: 'image',
    id,
    host: joins.host,
    image_id: id,
    short_id: shortOf(id),
    tags: image.tags,
    digests: image.digests,
    created: image.created,
    labels: image.labels,
    env: image.env,
    user: image.user,
    healthcheck:
      check === null
        ? null
        : {
            test: check.test,
            interval: check.interval,
            timeout: check.timeout,
            retries: check.retries,
            start_period: check.startPeriod,
          },
    has_healthcheck: check !== null,
    dangling: !tagged.has(id),
    used_by: users.map((c) => c.container.name),
    claimed_users: users.filter((c) => c.claims.length > 0).map((c) => c.container.name),
    used_by_scanner_only: users.length > 0 && users.every((c) => c.subject.data.scanner_self),
  };
  // Which containers use it needs every container read; which claim it, the ledger too.
  const unknown = [
    ...(joins.containersIncomplete
      ? IMAGES.unknown('docker', joins.containersIncomplete, ['used_by', 'claimed_users', 'used_by_scanner_only'])
      : []),
    ...(joins.ledgerUnread && !joins.containersIncomplete
      ? IMAGES.unknown('ledger', joins.ledgerUnread, ['claimed_users'])
      : []),
  ];
  return IMAGES.subject({
    id,
    data,
    unknown,
    locate: () => ({
      physical: [],
      logical: [{ kind: 'image', name: image.tags[0] ?? id, fullyQualifiedName: `${joins.host}/images/${id}` }],
    }),
    resource: null,
    module: null,
  });
}
