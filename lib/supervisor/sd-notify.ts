// systemd's readiness protocol (Type=notify) for the supervisor, which is the unit's main process.
// Node has no AF_UNIX datagram sockets, so systemd's own `systemd-notify` sends the message; the
// unit accepts it from the processes of its cgroup (NotifyAccess=all), and systemd-notify waits
// until systemd has read it (its barrier, systemd >= 246) so that its short life loses nothing.
// Outside systemd (no NOTIFY_SOCKET) nothing is sent.
import { execFile } from 'node:child_process';
import { systemLog } from '../log/system-log.js';

const log = systemLog.child({ role: 'supervisor' });

/** Sends `fields` (e.g. READY=1, STATUS=...) to the service manager when it asked for them. */
export function notifySystemd(fields: string[]): void {
  if (!process.env.NOTIFY_SOCKET) return;
  execFile('systemd-notify', fields, { timeout: 10_000 }, (err, _stdout, stderr) => {
    if (err) log.error({ err: err.message, stderr: stderr.trim(), fields }, 'systemd-notify failed: systemd does not know the node state');
  });
}
