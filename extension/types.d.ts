/* Types shared by the extension's classic scripts (checked by tsc with checkJs; no runtime code).
 *
 * The content scripts are classic scripts that share code through globalThis.Wherefrom (see
 * content/namespace.js); shared/protocol.js and shared/sites.js assign globals too. This file
 * names those globals and the registry's shapes (extension/sites/registry.schema.json).
 */

// ------------------------------------------------------------------ registry (registry.schema.json)

/** One CSS selector, or alternatives (joined with ', '). */
type WfSelectors = string | string[];
type WfRole = 'user' | 'assistant';

interface WfRoleSpec {
  attr?: string;
  values?: Record<string, WfRole>;
  user?: WfSelectors;
  assistant?: WfSelectors;
  default?: WfRole;
}

type WfTextSpec = WfSelectors | { user?: WfSelectors; assistant?: WfSelectors };

interface WfEvidence {
  fixture?: string;
  page?: string;
  count: number;
  checked?: string;
}

interface WfStreamingSpec {
  selector?: WfSelectors;
  attr?: string;
  value?: string;
}

interface WfNativeIdSpec {
  attr: string;
  closest?: string;
}

interface WfLayout {
  id: string;
  reason: string;
  turn?: WfSelectors;
  role?: WfRoleSpec;
  user?: WfSelectors;
  assistant?: WfSelectors;
  text?: WfTextSpec;
  exclude?: string[];
  native_id?: WfNativeIdSpec;
  scroller?: WfSelectors;
  streaming?: WfStreamingSpec;
  lazy: 'virtual' | 'lazy-backward' | 'none';
  reverse?: boolean;
  evidence: WfEvidence[];
  join?: 'consecutive';
}

interface WfPanel {
  id: string;
  reason: string;
  selector: WfSelectors;
  text?: WfSelectors;
  exclude?: string[];
  opener?: WfSelectors;
  evidence: WfEvidence[];
}

interface WfPageDataSpec {
  id: string;
  reason: string;
  paths: string;
  script?: WfSelectors;
  marker?: string;
  format: 'json' | 'enqueue' | 'assign';
  messages: string;
  role: string;
  roles?: Record<string, WfRole>;
  text: string;
  native_id?: string;
  skip?: string;
  join?: 'consecutive';
  evidence: WfEvidence[];
}

interface WfComposerSpec {
  selector: WfSelectors;
  editor: 'prosemirror' | 'tiptap' | 'lexical' | 'quill' | 'textarea' | 'contenteditable';
  send: WfSelectors;
}

interface WfSite {
  id: string;
  name: string;
  hosts: string[];
  matches: string[];
  conversation?: string;
  shadow?: string;
  exclude?: string[];
  composer: WfComposerSpec;
  layouts: WfLayout[];
  panels?: WfPanel[];
  page_data?: WfPageDataSpec[];
  /** Not in the schema: capture.js reads it as a fallback for a layout's scroller. */
  scroller?: WfSelectors;
}

interface WfRegistry {
  $schema?: string;
  version: number;
  defaults: { exclude: string[] };
  sites: WfSite[];
}

// ------------------------------------------------------------------ turns

/** A turn on the wire (content → background): protocol.js validates exactly these fields. */
interface WfWireTurn {
  role: WfRole;
  text: string;
  markdown?: string;
  native_id?: string;
}

/** A turn read from the mounted DOM (extractor.readMounted) or from the page's data. */
interface WfMountedTurn {
  el?: Element | null;
  role: WfRole;
  text: string;
  markdown?: string;
  id?: string | null;
  streaming?: boolean;
}

/** readMounted's list also carries the turn elements that had no text (for missKind). */
type WfMountedTurns = WfMountedTurn[] & { empty?: Array<{ role: WfRole }> };

/** The parts of a layout the extractor reads (a panel read as a turn has only text/exclude). */
type WfLayoutPart = Partial<WfLayout>;

/** What extractor.detect found: the layout used (a panel's is only {id, lazy}), its turns, the
 * layouts tried. */
type WfFoundLayout = WfLayoutPart & { id: string };

interface WfFound {
  layout: WfFoundLayout | null;
  turns: WfMountedTurns;
  tried: string[];
  empty: Array<{ role: WfRole }>;
  source: string;
}

// ------------------------------------------------------------------ globals

/** shared/sites.js: the one chat-site matcher. */
interface WfSitesAPI {
  siteFor<S extends { id: string; matches: string[] }>(href: string, registry: { sites: S[] } | S[]): S | null;
  matchPatternRegex(pattern: string): RegExp | null;
  parseMatchPattern(pattern: string): WfMatchPattern | null;
  patternHost(pattern: string): string;
}

/** A Chrome match pattern, parsed (shared/sites.js parseMatchPattern). */
interface WfMatchPattern { scheme: string; host: string; path: string }

/** A site adapter: optional code hooks for what data cannot say (none are registered today). */
interface WfAdapter {
  init?(site: WfSite): void;
  text?(el: Element, nodes: Element[], exclude: string,
    visibleText: (root: Node, exclude?: string, sink?: WfSink | null) => string): string;
  turns?(turns: WfMountedTurns, ctx: { root: ParentNode; site: WfSite; layout: WfLayoutPart }): WfMountedTurns;
}

interface WfNamespace {
  adapters: Record<string, WfAdapter | undefined>;
  messages: { CAPTURE_TURNS: string; SELECTOR_MISS: string; INSERT_TEXT: string };
  registry: WfRegistry;
  markdown: WfMarkdownAPI;
  extractor: WfExtractorAPI;
  pageData: WfPageDataAPI;
  composer: WfComposerAPI;
  runtime: WfRuntimeAPI;
}

/** content/capture.js's runtime, for tests and diagnostics. */
interface WfRuntimeAPI {
  site: WfSite;
  state(): Record<string, unknown>;
  scrollCollect(): Promise<void>;
}

interface WfMarkdownAPI {
  sink(opts: { root: Element; exclude: string; role: string }): WfSink;
  join(sinks: WfSink[]): string;
  codeText(root: Node, exclude?: string): string;
  mathOf(el: Element): { tex: string; display: boolean } | null;
}

/** content/markdown.js: sees one walk of a turn's text root (extractor.visibleText) and builds
 * the clean copy that becomes the turn's Markdown. */
interface WfSink {
  top: HTMLElement;
  text(data: string): void;
  br(): void;
  media(node: Element): void;
  open(node: Element, cs: CSSStyleDeclaration, block: boolean): void;
  close(node?: Element): void;
}

interface WfExtractorAPI {
  matchPatternRegex(pattern: string): RegExp | null;
  siteFor(href: string, registry?: { sites: WfSite[] }): WfSite | null;
  asSelector(s: WfSelectors | undefined | null): string;
  queryAll(root: ParentNode, selector: string, deep?: boolean): Element[];
  visibleText(root: Node, exclude?: string, sink?: WfSink | null): string;
  normalise(text: string): string;
  excludeFor(site: WfSite, layout?: WfLayoutPart | null): string;
  turnElements(root: ParentNode, site: WfSite, layout: WfLayoutPart): WfTurnElement[];
  countMatches(root: ParentNode, site: WfSite, layout: WfLayoutPart): number;
  turnContent(el: Element, role: WfRole, site: WfSite, layout: WfLayoutPart): { text: string; markdown?: string };
  readMounted(root: ParentNode, site: WfSite, layout: WfLayoutPart): WfMountedTurns;
  readPanels(root: ParentNode, site: WfSite, turnEls: Array<Element | null | undefined>): WfPanelRead[];
  pathPattern(pathname: string): string;
  missKind(turns: Array<{ role: string }>, found: { empty?: Array<{ role: string }>; source: string } | null): string | null;
  isStreaming(root: ParentNode, el: Element | null, spec: WfStreamingSpec | undefined, deep: boolean): boolean;
  detect(root: ParentNode, site: WfSite): WfFound;
  Accumulator: new () => WfAccumulator;
}

/** A turn element of a layout, with its role. */
interface WfTurnElement {
  el: Element;
  role: WfRole;
}

/** An open report/artifact panel's text (extractor.readPanels). */
interface WfPanelRead {
  el: Element;
  text: string;
  markdown?: string;
  panel: WfPanel;
}

/** One turn the Accumulator holds (`key` stitches virtualised windows together). */
interface WfAccEntry {
  key: string;
  role: WfRole;
  text: string;
  markdown?: string;
  id: string | null;
}

interface WfAccumulator {
  merge(mounted: WfMountedTurn[]): boolean;
  turns(): WfWireTurn[];
}

/** A turn read from the page's own data (content/pagedata.js). */
interface WfPageTurn {
  role: WfRole;
  text: string;
  id: string | null;
}

interface WfPageDataAPI {
  read(doc: Document, site: WfSite): { reader: WfPageDataSpec; turns: WfPageTurn[] } | null;
  readWith(doc: Document, spec: WfPageDataSpec): WfPageTurn[];
  decodeTurboStream(flat: unknown[]): unknown;
  pathValues(value: unknown, path: string | undefined): unknown[];
}

interface WfInsertResult {
  ok: boolean;
  editor: string | null;
  error?: string;
}

interface WfComposerAPI {
  find(site: WfSite, root?: ParentNode): Element | null;
  insert(site: WfSite, text: unknown): WfInsertResult;
}

/** Turndown and its GFM plugin are vendored classic scripts (extension/vendor/, not type-checked):
 * their API is the library's, so `any` here. */
declare var TurndownService: any;
declare var turndownPluginGfm: any;

declare var Wherefrom: WfNamespace | undefined;
declare var WherefromSites: WfSitesAPI;
declare var WherefromProtocol: WfProtocolAPI;

type WfSenderKind = 'content' | 'panel' | 'background';

/** The payload of each message type: what shared/protocol.js SCHEMAS checks at run time, as
 * types (tests/js/protocol.test.mjs proves the two name the same types and fields). */
interface WfPayloads {
  'content:capture-turns': { site: string; turns: WfWireTurn[]; settled?: boolean };
  'content:selector-miss': { site: string; kind?: string; layouts?: string[]; path?: string; detail?: string };
  'background:insert-text': { text: string };
  'panel:get-state': { tabId?: number };
  'panel:opened': {};
  'panel:get-page': { tabId?: number };
  'panel:save-note': { tabId?: number; text: string };
  'panel:add-page': { tabId?: number };
  'panel:forget-dry-run': { host: string };
  'panel:forget-apply': { host: string; confirm: string };
  'panel:forget-undo': { batch: string };
  'panel:get-policy': { refresh?: boolean };
  'panel:set-rule': { host: string; mode: 'off' | 'suggest' | 'collect' };
  'panel:delete-rule': { host: string };
  'panel:pair': { token: string };
  'panel:unpair': {};
  'panel:accept-disclosure': {};
  'panel:set-page-memory': { on: boolean };
  'panel:get-activity': {};
  'panel:retry-outbox': {};
  'panel:insert-text': { tabId?: number; text: string };
  'panel:clear-notice': { tabId?: number };
  'panel:search': { q: string; limit?: number };
  'panel:get-conversation': { tabId?: number; url?: string };
  'panel:list-library': {};
  'panel:get-document': { id: number };
  'panel:delete-document': { id: number };
  'panel:undo-delete-document': { id: number };
}

type WfMessageType = keyof WfPayloads;
/** One message on the wire, discriminated by `type`. */
type WfMessage = { [K in WfMessageType]: { type: K; payload: WfPayloads[K] } }[WfMessageType];
type WfContentMessage = Extract<WfMessage, { type: `content:${string}` }>;
type WfPanelMessage = Extract<WfMessage, { type: `panel:${string}` }>;
type WfPanelType = WfPanelMessage['type'];
/** What validate answers: the message, checked, or why it was refused. */
type WfValidated<M> = (M & { ok: true }) | { ok: false; error: string };

/** The constant name of each message type (P.CAPTURE_TURNS === 'content:capture-turns'). */
interface WfTypeNames {
  readonly CAPTURE_TURNS: 'content:capture-turns';
  readonly SELECTOR_MISS: 'content:selector-miss';
  readonly INSERT_TEXT: 'background:insert-text';
  readonly PANEL_GET_STATE: 'panel:get-state';
  readonly PANEL_OPENED: 'panel:opened';
  readonly PANEL_GET_PAGE: 'panel:get-page';
  readonly PANEL_SAVE_NOTE: 'panel:save-note';
  readonly PANEL_ADD_PAGE: 'panel:add-page';
  readonly PANEL_FORGET_DRY_RUN: 'panel:forget-dry-run';
  readonly PANEL_FORGET_APPLY: 'panel:forget-apply';
  readonly PANEL_FORGET_UNDO: 'panel:forget-undo';
  readonly PANEL_GET_POLICY: 'panel:get-policy';
  readonly PANEL_SET_RULE: 'panel:set-rule';
  readonly PANEL_DELETE_RULE: 'panel:delete-rule';
  readonly PANEL_PAIR: 'panel:pair';
  readonly PANEL_UNPAIR: 'panel:unpair';
  readonly PANEL_ACCEPT_DISCLOSURE: 'panel:accept-disclosure';
  readonly PANEL_SET_PAGE_MEMORY: 'panel:set-page-memory';
  readonly PANEL_GET_ACTIVITY: 'panel:get-activity';
  readonly PANEL_RETRY_OUTBOX: 'panel:retry-outbox';
  readonly PANEL_INSERT_TEXT: 'panel:insert-text';
  readonly PANEL_CLEAR_NOTICE: 'panel:clear-notice';
  readonly PANEL_SEARCH: 'panel:search';
  readonly PANEL_GET_CONVERSATION: 'panel:get-conversation';
  readonly PANEL_LIST_LIBRARY: 'panel:list-library';
  readonly PANEL_GET_DOCUMENT: 'panel:get-document';
  readonly PANEL_DELETE_DOCUMENT: 'panel:delete-document';
  readonly PANEL_UNDO_DELETE_DOCUMENT: 'panel:undo-delete-document';
}

interface WfProtocolAPI extends WfTypeNames {
  validate(message: unknown, senderKind: 'content'): WfValidated<WfContentMessage>;
  validate(message: unknown, senderKind: 'panel'): WfValidated<WfPanelMessage>;
  validate(message: unknown, senderKind: WfSenderKind | string | null): WfValidated<WfMessage>;
  directionOf(type: string): WfSenderKind | null;
  MODES: string[];
  LIMITS: { text: number; markdown: number; detail: number; turns: number; contentChars: number };
  TYPES: Readonly<WfTypeNames>;
}
