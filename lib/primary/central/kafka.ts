// The Kafka transport (kafkajs) of the feeds (`kafkaSub`) and feedbacks (`kafkaPub`), behind the
// Feed and Sink interfaces of transport.ts. Untested against a broker: none installs here.
import { Kafka, logLevel, type Consumer, type Producer } from 'kafkajs';
import type { InfoLog } from './http.js';
import type { Origin } from './message.js';
import type { Feed, FeedItem, Sink } from './transport.js';

export interface KafkaConnection { clientId: string; brokers: string[] }

const clientOf = (c: KafkaConnection): Kafka => new Kafka({ clientId: c.clientId, brokers: c.brokers, logLevel: logLevel.NOTHING });

/** `kafkaSub`: each record of the topic is one message v1. */
export class KafkaFeed implements Feed {
  readonly event: Origin;
  private consumer: Consumer | undefined;

  constructor(
    private readonly conn: KafkaConnection,
    private readonly info: { groupId: string; subscribe: { topic: string; fromBeginning: boolean } },
    feature: string, private readonly log: InfoLog,
  ) {
    this.event = `/env/management/server/kafkaSub/${feature}`;
  }

  start(deliver: (item: FeedItem) => Promise<void>): void {
    const consumer = clientOf(this.conn).consumer({ groupId: this.info.groupId });
    this.consumer = consumer;
    const run = async (): Promise<void> => {
      await consumer.connect();
      await consumer.subscribe({ topic: this.info.subscribe.topic, fromBeginning: this.info.subscribe.fromBeginning });
      this.log('central management: kafkaSub subscribed', { brokers: this.conn.brokers, topic: this.info.subscribe.topic, groupId: this.info.groupId });
      await consumer.run({
        eachMessage: async ({ message }) => {
          if (message.value !== null) await deliver({ kind: 'message', text: message.value.toString('utf8') });
        },
      });
    };
    // kafkajs retries the connection itself; a failure past its retries is logged.
    run().catch((err: Error) => this.log('central management: kafkaSub failed', { brokers: this.conn.brokers, error: err.message }));
  }

  async stop(): Promise<void> {
    await this.consumer?.disconnect().catch(() => undefined);
  }
}

/** `kafkaPub`: each feedback is one record on the topic. */
export class KafkaSink implements Sink {
  private producer: Producer | undefined;
  private connected: Promise<void> | undefined;

  constructor(private readonly conn: KafkaConnection, private readonly topic: string, private readonly log: InfoLog) {}

  async send(message: Record<string, unknown>): Promise<void> {
    this.producer ??= clientOf(this.conn).producer();
    this.connected ??= this.producer.connect();
    try {
      await this.connected;
      await this.producer.send({ topic: this.topic, messages: [{ value: JSON.stringify(message) }] });
      this.log('central management: kafkaPub sent', { topic: this.topic });
    } catch (err) {
      this.connected = undefined;
      this.log('central management: kafkaPub failed', { topic: this.topic, error: (err as Error).message });
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.producer?.disconnect().catch(() => undefined);
  }
}
