/**
 * Message and its parts: a list item is the message, or for a record that could not be read its
 * error (graphql-js then nulls that item alone); MessageStatus.raw is the service's wording,
 * tagged internal so a contract graph can leave it out.
 */
import { describe, expect, it } from 'vitest';
import type { Message, UnreadableMessage } from '../../src/core/domain.js';
import { UpstreamError } from '../../src/core/errors.js';
import { messageOrError } from '../../src/graph/message.js';
import { printGatewaySchema } from '../../src/graph/print.js';
import '../../src/graph/schema.js';

const message: Message = {
  id: 'a'.repeat(32),
  systemId: '41',
  sentAt: new Date(Date.UTC(2026, 0, 2)),
  tid: 'T-A',
  phone: '15550000000',
  direction: 'OUTBOUND',
  body: 'hello',
  mms: false,
  mediaUrl: null,
  status: { code: 200, text: 'Message delivered', ok: true, raw: '200 Message delivered' },
};

describe('messageOrError', () => {
  it('is the message itself for a readable record', () => {
    expect(messageOrError(message)).toBe(message);
  });

  it("is the record's error for one that could not be read", () => {
    const error = new UpstreamError('UPSTREAM_ERROR', 'messages[3].GMTdate is not a timestamp');
    const unreadable: UnreadableMessage = { unreadable: true, id: 'b'.repeat(32), error };
    expect(messageOrError(unreadable)).toBe(error);
  });
});

describe('MessageStatus', () => {
  it("tags raw, the service's own wording, as internal", () => {
    expect(printGatewaySchema()).toMatch(
      /type MessageStatus\s+@shareable\s+\{[^}]*raw: String! @tag\(name: "internal"\)/,
    );
  });
});
