import { describe, expect, it } from 'vitest';

import { parseLabEvent } from './objectives/types';
import { readEvents, SSEDecoder } from './sse';

const bytes = (text: string) => new TextEncoder().encode(text);

/** Every way of cutting `data` into two chunks gives the same payloads. */
function payloadsForAllSplits(data: Uint8Array): string[][] {
  const results: string[][] = [];
  for (let cut = 0; cut <= data.length; cut++) {
    const sse = new SSEDecoder();
    results.push([...sse.push(data.slice(0, cut)), ...sse.push(data.slice(cut)), ...sse.end()]);
  }
  return results;
}

describe('SSEDecoder', () => {
  it('gives the same messages wherever the chunks are cut (lines, CRLF, UTF-8 characters)', () => {
    const stream = bytes('data: {"a":"é✓"}\r\n\r\n: a comment\n\ndata: one\ndata: two\n\nevent: x\ndata: 3\r\r');
    for (const payloads of payloadsForAllSplits(stream)) {
      expect(payloads).toEqual(['{"a":"é✓"}', 'one\ntwo', '3']);
    }
  });

  it('keeps a message that the stream ends without a blank line after', () => {
    const sse = new SSEDecoder();
    expect(sse.push(bytes('data: last'))).toEqual([]);
    expect(sse.end()).toEqual(['last']);
  });

  it('one byte at a time', () => {
    const data = bytes('data: {"type":"content","content":"Grüße"}\n\n');
    const sse = new SSEDecoder();
    const payloads = [...data].flatMap(byte => sse.push(Uint8Array.of(byte)));
    expect(payloads).toEqual(['{"type":"content","content":"Grüße"}']);
  });
});

describe('readEvents', () => {
  it('yields the known chat events of a body, skipping other payloads', async () => {
    const chunks = ['data: {"type":"heartbeat","session_id":"s"}\n\nda', 'ta: not json\n\ndata: {"type":"con', 'tent","session_id":"s","content":"hi"}\n\n'];
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        chunks.forEach(chunk => controller.enqueue(bytes(chunk)));
        controller.close();
      }
    });
    const events = [];
    for await (const event of readEvents(body)) {
      events.push(event);
    }
    expect(events).toEqual([
      { type: 'heartbeat', session_id: 's' },
      { type: 'content', session_id: 's', content: 'hi' }
    ]);
  });

  it('skips a payload whose type no chat event has, and reads it with its own parser', async () => {
    const lab = { type: 'lab_view', project_id: 'p', view: { title: 'T', max_score: 0, stages: [] } };
    const stream = () =>
      new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes(`data: ${JSON.stringify(lab)}\n\ndata: {"type":"heartbeat","session_id":"s"}\n\n`));
          controller.close();
        }
      });
    const chat = [];
    for await (const event of readEvents(stream())) {
      chat.push(event);
    }
    expect(chat).toEqual([{ type: 'heartbeat', session_id: 's' }]);
    const labEvents = [];
    for await (const event of readEvents(stream(), parseLabEvent)) {
      labEvents.push(event);
    }
    expect(labEvents).toEqual([lab]);
  });
});
