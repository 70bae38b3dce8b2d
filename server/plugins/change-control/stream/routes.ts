import { STREAM_EVENTS } from '../../../../contract/api/change-control';
import { createCtx, TooManyRequests, ValidationError, type BackgroundTask, type Host } from '../../../host';
import { parseFilters, StreamReply } from '../../../host/http';
import { ccDb } from '../db/database';
import { API_ROOT, APP_LABEL } from '../names';
import { stateSlot } from '../state';
import { KEEP_ALIVE_MS, MAX_STREAMS_PER_USER, STREAM_RETRY_AFTER_S, StreamHub } from './hub';
import { pruneStreamEvents, resumesTooOld, streamPosition, streamSignal, STREAM_RETENTION } from './stream-repository';

export const STREAM_PATH = `${API_ROOT}stream/`;
/** At most this many `change_request` values on one stream. */
const MAX_REQUESTS = 1000;
/** The window is pruned this often besides on the write path (so a quiet service forgets too). */
const PRUNE_INTERVAL_MS = 10 * 60 * 1000;

/** The open streams of this service instance. */
export function streamHub(host: Host): StreamHub {
  return stateSlot(host, 'stream-hub', () => new StreamHub(host, streamSignal(host)));
}

/** A `Last-Event-ID` value: a non-negative integer, else 400 naming where it came from. */
function eventId(raw: string, field: string): number {
  const text = raw.trim();
  if (!/^\d{1,15}$/.test(text))
    throw ValidationError.field(field, `"${raw.slice(0, 40)}" is not an event id (a non-negative integer).`);
  return Number(text);
}

function pruneSweeper(host: Host): BackgroundTask {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  const prune = (): void => {
    running = host.unawaited.run(
      running
        .then(() => pruneStreamEvents(createCtx({ host, user: null, requestId: 'stream-prune', baseUrl: '' })))
        .catch((err) => host.log.error(`event stream: pruning failed: ${(err as Error).message}`)),
    );
  };
  return {
    start() {
      prune();
      timer = setInterval(prune, PRUNE_INTERVAL_MS);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}

const DESCRIPTION = [
  'Server-Sent Events: what changed, as it commits. Each event has `id: <n>`, `event: <type>` and `data: <StreamEvent JSON>`',
  `({id, event, time, change_request, object_type, object_id}); types: ${STREAM_EVENTS.join(', ')}.`,
  'Clients re-read what an event names. A comment line `: keep-alive` comes every 15 s.',
  'Resume with the header `Last-Event-ID: <n>` (or `?last_event_id=<n>`): every kept event after n that the caller may see comes first;',
  'when n is older than the kept window (24 h, at most 100,000 events) one `event: reset` with `data: {}` comes first: reload everything.',
  'An event reaches only callers who may view its change request and the object it names (view permission with constraints, checked when sent).',
  `A user has at most ${MAX_STREAMS_PER_USER} open streams: one more is 429 with Retry-After.`,
].join(' ');

/** `stream/`: the event stream, and the sweep that keeps its window bounded. */
export function registerStreamRoutes(host: Host): void {
  const hub = streamHub(host);
  host.background.push(pruneSweeper(host));
  host.routes.add({
    method: 'GET',
    path: STREAM_PATH,
    access: { permission: `${APP_LABEL}.view_changerequest` },
    summary: 'Event stream (Server-Sent Events) of what changed on the change requests the caller may view',
    description: DESCRIPTION,
    tag: 'change-control',
    query: [
      {
        name: 'change_request',
        description: 'Only events of these change requests (repeatable, or comma-separated).',
        repeated: true,
      },
      {
        name: 'last_event_id',
        description: 'Resume after this event id (the Last-Event-ID header wins when both are sent).',
      },
    ],
    stream: {
      contentType: 'text/event-stream',
      description: `A stream of events; see the description. Keep-alive every ${KEEP_ALIVE_MS / 1000} s.`,
    },
    handler: async ({ ctx, query, header }) => {
      const filters = parseFilters(query, { change_request: { type: 'int' } }, ctx.user!.id);
      const changeRequests = (filters.change_request as number[] | undefined) ?? null;
      if (changeRequests && changeRequests.length > MAX_REQUESTS)
        throw ValidationError.field('change_request', `At most ${MAX_REQUESTS} change requests per stream.`);
      const fromHeader = header('last-event-id');
      const fromQuery = query.last_event_id?.[0];
      const asked =
        fromHeader !== undefined
          ? eventId(fromHeader, 'Last-Event-ID')
          : fromQuery !== undefined
            ? eventId(fromQuery, 'last_event_id')
            : null;

      // At most MAX_STREAMS_PER_USER open streams per user: one more is refused until one closes.
      const slot = hub.reserve(ctx.user!.id);
      if (!slot)
        throw new TooManyRequests(
          STREAM_RETRY_AFTER_S,
          `You already have ${MAX_STREAMS_PER_USER} open event streams; close one (or try again in ${STREAM_RETRY_AFTER_S} seconds).`,
        );
      const { last, prunedThrough } = await streamPosition(ccDb(ctx));
      // Older than the window (pruned, or older than its age though not pruned yet), or an id this
      // service never handed out: the client reloads and goes on from now.
      const reset =
        asked !== null &&
        (asked < prunedThrough || asked > last || (await resumesTooOld(ccDb(ctx), asked, ctx.host.clock.now())));
      const request = {
        slot,
        authorization: header('authorization') ?? '',
        user: ctx.user!,
        baseUrl: ctx.baseUrl,
        requestId: ctx.requestId,
        after: asked === null || reset ? last : asked,
        reset,
        changeRequests,
      };
      return new StreamReply('text/event-stream; charset=utf-8', (sink) => hub.open(request, sink));
    },
  });
}

export { STREAM_RETENTION };
