// `functions.contents.pagedesk`: the HTML-editing function (document 3).
import { Type } from 'typebox';
import { Bool, List, NullStr, Num, Obj, OneOf, Opt, Section, Str } from './common.js';

const INSERT_ACTIONS = ['appendChild', 'insertBefore', 'insertAfter', 'wrapInnerHtml'] as const;
const REFCTRL_ACTIONS = ['removeTag', 'removeAttr', 'replaceAttr', 'insertAttr'] as const;

const ReplaceList = () => Section({
  enable: Bool(false),
  list: List(Obj({ src: Str(), dest: Str(), flags: Str({ default: 'g' }) })),
});

const Target = () => Obj({
  framename: Type.Union([Type.String(), Type.Null()], { default: '_blank', description: '_blank, _self, _parent, _top, a frame name, or null for none' }),
  overwrite: Bool(true, 'true always sets; false only when absent'),
});

export const PagedeskSchema = Section({
  meta: Section({
    enable: Bool(false),
    keyword: Str({ default: 'pagedesk', minLength: 1, description: 'URL segment that invokes the function' }),
    maxSourceSize: Num(1, { minimum: 0, description: 'MiB of source an edit reads (larger: passed through unedited); 0: no limit' }),
    maxDomSourceSize: Num(0, { minimum: 0, description: 'MiB of HTML given to the DOM sections (larger: they are skipped); 0: no limit' }),
    urlScheme: NullStr({ description: 'http or https: the scheme of ${URL} in templates; null: the client\'s' }),
  }),
  template: Section({
    enable: Bool(false),
    list: List(Obj({
      name: Str({ minLength: 1 }),
      type: OneOf(['html', 'json'], 'html'),
      body: Str({ description: '${URL} is the request URL' }),
    })),
  }),
  replace: Section({ pre: ReplaceList(), post: ReplaceList() }),
  html: Section({
    enable: Bool(false, 'recognise text as HTML; required before any DOM processing'),
    in: Section({ at: NullStr(), escaped: Bool(true) }),
    out: Section({ at: NullStr(), escaped: Bool(true) }),
  }),
  dom: Section({
    extract: Section({ enable: Bool(false), selector: NullStr(), attribute: NullStr(), includeSelf: Bool(false) }),
    insert: Section({
      enable: Bool(false),
      action: OneOf(INSERT_ACTIONS, 'appendChild'),
      list: List(Obj({ selector: Str(), action: Opt(OneOf(INSERT_ACTIONS)), html: Str() })),
    }),
    remove: Section({
      enable: Bool(false),
      includeChild: Bool(true),
      elements: List(Type.Union([Type.String(), Obj({ tag: Str(), includeChild: Opt(Type.Boolean()) })])),
    }),
    anchor: Section({
      enable: Bool(false),
      enableLink: Bool(true, 'false removes href'),
      target: Section({
        framename: Type.Union([Type.String(), Type.Null()], { default: '_blank' }),
        overwrite: Bool(true),
      }),
      matchingList: List(Obj({ domain: Str({ description: 'regex' }), enableLink: Opt(Type.Boolean()), target: Opt(Target()) })),
    }),
    refctrl: Section({
      enable: Bool(false),
      mode: OneOf(['whitelist', 'blacklist'], 'whitelist'),
      domains: List(Str()),
      tags: List(Obj({
        name: Str(),
        attr: Opt(Str()),
        action: OneOf(REFCTRL_ACTIONS, 'removeTag'),
        domains: Type.Union([Type.Array(Str()), Type.Null()], { default: null }),
        replaceAttr: Opt(Str()),
        insertAttr: Opt(Type.Array(Obj({ name: Str(), value: Str() }))),
      })),
    }),
  }),
});
