// `meta`: node-level information (document 2).
import { Bool, Int, OneOf, Opt, Section, Str } from './common.js';

export const MetaSchema = Section({
  version: Str({ default: '1', minLength: 1, description: 'always "1"; sent to the central server with each poll' }),
  group: Str({ default: '', description: 'node-group name; first label of every metric when labelGroupToMetrics' }),
  labelGroupToMetrics: Bool(true),
  branch: Str({ default: '', description: 'labels the intent (test, stage, production); no function' }),
  admin: Opt(Str({ description: 'administrator mail or name' })),
  defaultHosting: Opt(Str({ description: 'host used when no virtual host matches; otherwise 404' })),
  setting: Section({
    deploy: OneOf(['exclusive', 'shared'], 'exclusive', 'exclusive: all hosts deployed together; shared: only changed hosts'),
  }),
  history: Section({
    retention: Section({
      days: Int(60, { minimum: 0 }),
      count: Int(100, { minimum: 0 }),
      size: Int(10, { minimum: 0, description: 'MB' }),
    }),
  }),
  settingTrace: Section({
    enable: Bool(false),
    keyword: Str({ default: '_trace_', minLength: 1 }),
  }),
});
