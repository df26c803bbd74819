/**
 * Server-sent events read from a fetch body: bytes in any chunking -> the `data:` payload
 * of each message, in order.
 */
import { type ChatEvent, parseEvent } from './events';

/**
 * Splits an SSE byte stream into message payloads. Feed it chunks as they arrive (a
 * multi-byte character or a line may be split anywhere); it returns the payloads that
 * completed. Multi-line `data:` fields are joined with "\n"; comments and other fields
 * are ignored, as the SSE specification says.
 */
export class SSEDecoder {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private data: string[] = [];

  push(chunk: Uint8Array): string[] {
    return this.lines(this.decoder.decode(chunk, { stream: true }));
  }

  /** The end of the stream: a last message not followed by a blank line still counts. */
  end(): string[] {
    const payloads = this.lines(this.decoder.decode() + '\n');
    if (this.data.length) {
      payloads.push(this.data.join('\n'));
      this.data = [];
    }
    return payloads;
  }

  private lines(text: string): string[] {
    this.buffer += text;
    const payloads: string[] = [];
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      // A lone "\r" at the end may be the first half of "\r\n": wait for the next chunk.
      if (this.buffer[newline] === '\r' && newline === this.buffer.length - 1) {
        break;
      }
      const line = this.buffer.slice(0, newline);
      const width = this.buffer.startsWith('\r\n', newline) ? 2 : 1;
      this.buffer = this.buffer.slice(newline + width);
      if (line === '') {
        if (this.data.length) {
          payloads.push(this.data.join('\n'));
          this.data = [];
        }
      } else if (line.startsWith('data:')) {
        const value = line.slice(5);
        this.data.push(value.startsWith(' ') ? value.slice(1) : value);
      }
    }
    return payloads;
  }
}

/**
 * The events of an SSE response body as `parse` reads them (the chat events by default),
 * in order; payloads it gives null for are skipped. Ends when the body ends; cancelling
 * the fetch (its AbortSignal) ends it with an AbortError.
 */
export function readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ChatEvent>;
export function readEvents<T>(body: ReadableStream<Uint8Array>, parse: (data: string) => T | null): AsyncGenerator<T>;
export async function* readEvents<T>(
  body: ReadableStream<Uint8Array>,
  parse: (data: string) => T | null = parseEvent as (data: string) => T | null
): AsyncGenerator<T> {
  const reader = body.getReader();
  const sse = new SSEDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      const payloads = done ? sse.end() : sse.push(value);
      for (const payload of payloads) {
        const event = parse(payload);
        if (event) {
          yield event;
        }
      }
      if (done) {
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}
