// A Server-Sent Events parser (the `text/event-stream` format of the HTML standard), fed with
// decoded chunks as they arrive and returning the complete messages; and the reading of the
// change-control stream's messages into events. No VS Code, no I/O here.
import { STREAM_EVENTS, STREAM_RESET, streamEvent, type StreamEvent } from '../../contract/api/change-control';

export interface SseMessage {
  /** The `event:` field ("message" when absent). */
  event: string;
  data: string;
  /** The last event id after this message (`id:` of this message or an earlier one). */
  lastEventId: string;
  /** A `retry:` field (milliseconds), when this message carried one. */
  retry?: number;
}

export class SseParser {
  private buffer = '';
  private afterCR = false;
  private started = false;
  private data: string[] = [];
  private event = '';
  private lastEventId = '';
  private retry: number | undefined;
  /** True once anything was received since the last `sawTraffic()` (keep-alive comments included). */
  private traffic = false;

  /** The last event id seen (to resume with Last-Event-ID). */
  get lastId(): string {
    return this.lastEventId;
  }

  /** Whether any line (even a comment) came since the last call; resets the flag. */
  sawTraffic(): boolean {
    const t = this.traffic;
    this.traffic = false;
    return t;
  }

  /** Feeds a decoded chunk; returns the messages it completed. */
  push(chunk: string): SseMessage[] {
    if (!chunk) return [];
    this.traffic = true;
    let text = chunk;
    if (!this.started) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (this.afterCR && text.startsWith('\n')) text = text.slice(1);
    this.afterCR = false;
    this.buffer += text;
    const out: SseMessage[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i += 1) {
      const c = this.buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.buffer.slice(start, i);
      if (c === 13) {
        if (i + 1 < this.buffer.length) {
          if (this.buffer.charCodeAt(i + 1) === 10) i += 1;
        } else {
          this.afterCR = true;
        }
      }
      start = i + 1;
      const message = this.line(line);
      if (message) out.push(message);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  private line(line: string): SseMessage | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.event = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\u0000')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^[0-9]+$/.test(value)) this.retry = Number(value);
        break;
      default:
        break;
    }
    return null;
  }

  private dispatch(): SseMessage | null {
    const retry = this.retry;
    this.retry = undefined;
    if (this.data.length === 0) {
      this.event = '';
      return null;
    }
    const message: SseMessage = {
      event: this.event || 'message',
      data: this.data.join('\n'),
      lastEventId: this.lastEventId,
    };
    if (retry !== undefined) message.retry = retry;
    this.data = [];
    this.event = '';
    return message;
  }
}

/** What a message of the change-control stream says: an event, a reset, or nothing we know. */
export type StreamMessage =
  { kind: 'event'; event: StreamEvent } | { kind: 'reset' } | { kind: 'ignored'; why: string };

export function readStreamMessage(message: SseMessage): StreamMessage {
  if (message.event === STREAM_RESET) return { kind: 'reset' };
  if (!(STREAM_EVENTS as readonly string[]).includes(message.event))
    return { kind: 'ignored', why: `unknown event "${message.event.slice(0, 60)}"` };
  let json: unknown;
  try {
    json = JSON.parse(message.data);
  } catch {
    return { kind: 'ignored', why: `event "${message.event}" carries no JSON` };
  }
  const parsed = streamEvent.safeParse(json);
  if (!parsed.success) return { kind: 'ignored', why: `event "${message.event}" does not match the contract` };
  return { kind: 'event', event: parsed.data };
}
