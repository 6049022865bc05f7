import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

const answer = (code: string | undefined): { status: number; message: string } => {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { status: 431, message: 'The request headers are too large.' };
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, message: 'The request took too long to arrive.' };
  }
  return { status: 400, message: 'The request is not valid HTTP.' };
};

/**
 * Requests that Node's HTTP parser rejects before the app sees them (oversized headers, malformed
 * HTTP, slow clients) get the contract's `Error` body too, instead of Node's bare status line.
 */
export const answerClientErrors = (server: Server): void => {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (!socket.writable || (socket as Duplex & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    const { status, message } = answer(error.code);
    const body = JSON.stringify({ error: status, message });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  });
};
