// features.heartbeat: `{messageVer, node}` on each fire of the schedule, POSTed (type
// apiPolling) or published (kafkaPub). A failed beat is logged; the next fire sends the next one.
import { CronRunner, type Clock } from './clock.js';
import type { InfoLog } from './http.js';
import type { NodeInfo } from './message.js';
import type { Sink } from './transport.js';

export class Heartbeat {
  private readonly runner: CronRunner;

  constructor(schedule: string, clock: Clock, sink: Sink, node: () => NodeInfo, log: InfoLog) {
    this.runner = new CronRunner(schedule, clock, async () => {
      try {
        await sink.send({ messageVer: '1', timestamp: new Date(clock.now()).toISOString(), node: node() });
      } catch (err) {
        log('central management: heartbeat not delivered', { error: (err as Error).message });
      }
    });
  }

  start(): void {
    this.runner.start();
  }

  stop(): void {
    this.runner.stop();
  }
}
