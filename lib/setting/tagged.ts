// Second pass over members whose shape depends on a `type` beside them (connection info, feed
// and feedback info, repository endpoint): each is checked against the schema of its type and
// given that schema's defaults, and every `connect` must name a connection of the right type.
import { Compile, type Validator } from 'typebox/compile';
import type { TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { collect, joinPath, type SettingIssue } from './issues.js';
import { isPlainObject } from './merge.js';
import { REPOSITORY_ENDPOINT } from './schema/log.js';
import {
  CONNECTION_INFO, HEARTBEAT_FEEDBACK, NODELIST_FEED, PURGE_FEED, PURGE_FEEDBACK, SETTING_FEED, SETTING_FEEDBACK,
  type TaggedInfo,
} from './schema/server.js';
import type { Setting } from './types.js';

const compiled = new Map<TSchema, Validator>();
function validatorOf(schema: TSchema): Validator {
  let v = compiled.get(schema);
  if (v === undefined) compiled.set(schema, (v = Compile(schema)));
  return v;
}

/** Checks `holder[member]` against the schema of `type`, filling its defaults in place. */
function checkShape(holder: Record<string, unknown>, member: string, schema: TSchema | undefined, path: string, issues: SettingIssue[]): void {
  if (schema === undefined) return;
  const value = holder[member];
  Value.Default(schema, value);
  issues.push(...collect(validatorOf(schema), value, joinPath(path, member)));
}

export function checkTagged(setting: Setting, issues: SettingIssue[]): void {
  const server = setting.env.management.server;
  const connections = checkConnections(server.connection ?? [], issues);
  checkFeatures(server.features, connections, issues);
  checkBackup(server.events.onSettingLoad.backup, connections, issues);
  checkRepositories(setting.env.log.repository.list, issues);
}

const BASE = 'env.management.server';
type Server = Setting['env']['management']['server'];
/** The connections by name, with their type. */
type Connections = Map<string, string>;

/** Each connection's info against its type; the names must be unique. */
function checkConnections(list: NonNullable<Server['connection']>, issues: SettingIssue[]): Connections {
  const connections: Connections = new Map();
  list.forEach((c, i) => {
    const path = `${BASE}.connection[${i}]`;
    if (connections.has(c.name)) issues.push({ path: `${path}.name`, message: `duplicate connection name "${c.name}"` });
    else connections.set(c.name, c.type);
    checkShape(c, 'info', CONNECTION_INFO[c.type], path, issues);
  });
  return connections;
}

/** `connect` of `path`'s info names a connection of type `wanted` (when the type wants one). */
function checkConnect(info: unknown, wanted: string | undefined, path: string, connections: Connections, issues: SettingIssue[]): void {
  if (wanted === undefined || !isPlainObject(info) || typeof info.connect !== 'string') return;
  const type = connections.get(info.connect);
  if (type === undefined) issues.push({ path: `${path}.info.connect`, message: `no connection named "${info.connect}"` });
  else if (type !== wanted) {
    issues.push({ path: `${path}.info.connect`, message: `connection "${info.connect}" is of type ${type}, expected ${wanted}` });
  }
}

function required(enabled: boolean, value: unknown, path: string, issues: SettingIssue[]): void {
  if (enabled && value === undefined) issues.push({ path, message: 'required when enable is true' });
}

/** The feeds and feedbacks of features: each info by its type, and a feature on needs its feed. */
function checkFeatures(f: Server['features'], connections: Connections, issues: SettingIssue[]): void {
  const tagged = (item: { type: string; info: Record<string, unknown> } | undefined, table: Record<string, TaggedInfo>, path: string): void => {
    if (item === undefined) return;
    const entry = table[item.type];
    checkShape(item, 'info', entry?.schema, path, issues);
    checkConnect(item.info, entry?.connect, path, connections, issues);
  };
  const fp = `${BASE}.features`;
  tagged(f.setting.feed, SETTING_FEED, `${fp}.setting.feed`);
  tagged(f.setting.feedback, SETTING_FEEDBACK, `${fp}.setting.feedback`);
  required(f.setting.enable, f.setting.feed, `${fp}.setting.feed`, issues);
  tagged(f.purge.feed, PURGE_FEED, `${fp}.purge.feed`);
  tagged(f.purge.feedback, PURGE_FEEDBACK, `${fp}.purge.feedback`);
  required(f.purge.enable, f.purge.feed, `${fp}.purge.feed`, issues);
  tagged(f.heartbeat.feedback, HEARTBEAT_FEEDBACK, `${fp}.heartbeat.feedback`);
  required(f.heartbeat.enable, f.heartbeat.feedback, `${fp}.heartbeat.feedback`, issues);
  tagged(f.nodelist.feed, NODELIST_FEED, `${fp}.nodelist.feed`);
  required(f.nodelist.enable, f.nodelist.feed, `${fp}.nodelist.feed`, issues);
  const nlb = f.nodelist.feedback;
  if (nlb !== undefined) {
    const kinds = nlb.type.split(';').filter((s) => s !== '');
    if (kinds.includes('setting') && nlb.info.hosting === undefined) {
      issues.push({ path: `${fp}.nodelist.feedback.info.hosting`, message: 'required when type includes setting' });
    }
    if (kinds.includes('api') && nlb.info.url === undefined) {
      issues.push({ path: `${fp}.nodelist.feedback.info.url`, message: 'required when type includes api' });
    }
  }
}

/** The setting backup of onSettingLoad: on, it needs a path and an httpCloudASig4 connection. */
function checkBackup(backup: Server['events']['onSettingLoad']['backup'], connections: Connections, issues: SettingIssue[]): void {
  const bp = `${BASE}.events.onSettingLoad.backup`;
  required(backup.enable, backup.connect, `${bp}.connect`, issues);
  required(backup.enable, backup.path, `${bp}.path`, issues);
  if (backup.connect !== undefined) {
    const type = connections.get(backup.connect);
    if (type === undefined) issues.push({ path: `${bp}.connect`, message: `no connection named "${backup.connect}"` });
    else if (type !== 'httpCloudASig4') {
      issues.push({ path: `${bp}.connect`, message: `connection "${backup.connect}" is of type ${type}, expected httpCloudASig4` });
    }
  }
}

/** Each log repository's endpoint by its type; the names must be unique. */
function checkRepositories(list: Setting['env']['log']['repository']['list'], issues: SettingIssue[]): void {
  const repos = new Set<string>();
  list.forEach((r, i) => {
    const path = `env.log.repository.list[${i}]`;
    if (repos.has(r.name)) issues.push({ path: `${path}.name`, message: `duplicate repository name "${r.name}"` });
    repos.add(r.name);
    checkShape(r, 'endpoint', REPOSITORY_ENDPOINT[r.type], path, issues);
  });
}
