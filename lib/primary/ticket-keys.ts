// TLS session ticket keys of the node. The primary makes them and hands them to every worker
// (IPC 'tls-ticket-keys'), so a ticket one worker issued resumes on any other: the kernel
// spreads a client's connections over the workers. A new key replaces the old one every
// TICKET_KEY_PERIOD_MS, which bounds how long a stolen key decrypts recorded sessions; node
// holds one key at a time, so tickets issued before a rotation give a full handshake after it.
import { randomBytes } from 'node:crypto';

/** One hour; tickets live 300 s (node's session timeout), so few are lost at a rotation. */
const TICKET_KEY_PERIOD_MS = 60 * 60 * 1000;

/** 16 bytes key name, 16 HMAC secret, 16 AES key: node's `ticketKeys`. */
const KEY_BYTES = 48;

export class TicketKeys {
  private key = randomBytes(KEY_BYTES).toString('base64');
  private timer: NodeJS.Timeout | undefined;

  /** `publish` gets every new key (base64) for the workers. */
  constructor(private readonly publish: (keys: string) => void) {}

  /** The key a starting worker gets. */
  current(): string {
    return this.key;
  }

  start(periodMs = TICKET_KEY_PERIOD_MS): void {
    this.timer = setInterval(() => this.rotate(), periodMs);
    this.timer.unref();
  }

  rotate(): void {
    this.key = randomBytes(KEY_BYTES).toString('base64');
    this.publish(this.key);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
