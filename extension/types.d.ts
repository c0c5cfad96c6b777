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
type WfMountedTurns = WfMountedTurn[] & { empty?: Array<{ role: WfRole }>; guess?: boolean; box?: Element | null };

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
  codeBlocks: WfCodeBlocksAPI;
  dom: WfDomAPI;
  visible: WfVisibleAPI;
  layouts: WfLayoutsAPI;
  turnText: WfTurnTextAPI;
  panels: WfPanelsAPI;
  generic: WfGenericAPI;
  genericSignals: WfGenericSignalsAPI;
  genericChrome: WfGenericChromeAPI;
  detect: WfDetectAPI;
  misses: WfMissesAPI;
  coverage: WfCoverageAPI;
  Accumulator: new () => WfAccumulator;
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
  visibleText(root: Node, exclude?: string, sink?: WfSink | null, skip?: Set<Element> | null): string;
  normalise(text: string): string;
  excludeFor(site: WfSite, layout?: WfLayoutPart | null): string;
  turnElements(root: ParentNode, site: WfSite, layout: WfLayoutPart): WfTurnElement[];
  countMatches(root: ParentNode, site: WfSite, layout: WfLayoutPart): number;
  turnContent(el: Element, role: WfRole, site: WfSite, layout: WfLayoutPart): WfContent;
  readMounted(root: ParentNode, site: WfSite, layout: WfLayoutPart): WfMountedTurns;
  readPanels(root: ParentNode, site: WfSite, turnEls: Array<Element | null | undefined>): WfPanelRead[];
  pathPattern(pathname: string): string;
  missKind(turns: Array<{ role: string }>, found: { empty?: Array<{ role: string }>; source: string } | null): string | null;
  isStreaming(root: ParentNode, el: Element | null, spec: WfStreamingSpec | undefined, deep: boolean): boolean;
  detect(root: ParentNode, site: WfSite, opts?: { generic?: boolean }): WfFound;
  Accumulator: new () => WfAccumulator;
}

/** A turn's content: `placeholder` when its text roots are sized empty boxes (not rendered yet). */
interface WfContent {
  text: string;
  markdown?: string;
  placeholder?: boolean;
}

/** content/codeblocks.js */
interface WfCodeBlocksAPI {
  codeElement(pre: Element): Element;
  codeText(root: Node, exclude?: string): string;
  codeLanguage(pre: Element, code: Element, turnRoot: Element): string;
  hidden(el: Element): boolean;
  matches(el: Element, sel: string | null | undefined): boolean;
  GUTTER: string;
  EDITOR: string;
}

/** content/dom.js */
interface WfDomAPI {
  asSelector(s: WfSelectors | undefined | null): string;
  queryAll(root: ParentNode, selector: string, deep?: boolean): Element[];
  selfOrDescendants(el: Element, selector: string, deep: boolean): Element[];
  outermost<E extends Element>(found: E[]): E[];
  hasMatch(el: Element, selector: string, deep: boolean): boolean;
  shown(el: Element): boolean;
}

/** content/visible.js */
interface WfVisibleAPI {
  visibleText(root: Node, exclude?: string, sink?: WfSink | null, skip?: Set<Element> | null): string;
  normalise(text: string): string;
  hiddenBox(node: Element, cs: CSSStyleDeclaration): boolean;
}

/** content/layouts.js */
interface WfLayoutsAPI {
  excludeFor(site: WfSite, layout?: WfLayoutPart | null): string;
  textSelector(layout: WfLayoutPart, role: WfRole): string;
  turnElements(root: ParentNode, site: WfSite, layout: WfLayoutPart): WfTurnElement[];
  orderedTurnElements(root: ParentNode, site: WfSite, layout: WfLayoutPart): WfTurnElement[];
  countMatches(root: ParentNode, site: WfSite, layout: WfLayoutPart): number;
  nativeId(el: Element, spec: WfNativeIdSpec | undefined): string | null;
  isStreaming(root: ParentNode, el: Element | null, spec: WfStreamingSpec | undefined, deep: boolean): boolean;
}

/** content/turntext.js */
interface WfTurnTextAPI {
  contentOf(el: Element, nodes: Element[], exclude: string, role: WfRole, adapter?: WfAdapter, skip?: Set<Element> | null): WfContent;
  turnContent(el: Element, role: WfRole, site: WfSite, layout: WfLayoutPart): WfContent;
  joinMarkdown(list: Array<string | undefined>): string | undefined;
}

/** content/panels.js */
interface WfPanelsAPI {
  readPanels(root: ParentNode, site: WfSite, turnEls: Array<Element | null | undefined>): WfPanelRead[];
  attachPanels(turns: WfMountedTurn[], panels: WfPanelRead[]): void;
}

/** content/generic_signals.js: what names a speaker, for the generic reader. */
interface WfSignal {
  el: Element;
  role: WfRole;
  key: string;
  label: boolean;
}
interface WfGenericSignalsAPI {
  signals(root: ParentNode): WfSignal[];
  speakerLabels(rows: Array<{ el: Element; role: WfRole }>): Set<Element>;
  OUTSIDE: string;
}

/** content/generic_chrome.js: what in a turn is not message text, for the generic reader. */
interface WfGenericChromeAPI {
  CHROME: string;
  skipped(row: Element, labels: Set<Element>): Element[];
}

/** content/generic.js: the generic conversation reader (knows no site). */
interface WfGenericAPI {
  read(root: ParentNode, site: WfSite): WfMountedTurns;
  region(root: ParentNode, turns: WfMountedTurn[]): Element | null;
}

/** content/detect.js */
interface WfDetectAPI {
  readMounted(root: ParentNode, site: WfSite, layout: WfLayoutPart): WfMountedTurns;
  detect(root: ParentNode, site: WfSite, opts?: { generic?: boolean }): WfFound;
  bothRoles(turns: Array<{ role: string }>): boolean;
  preferPageData(found: WfFound, dataTurns: Array<unknown>): boolean;
}

/** content/misses.js */
interface WfMissesAPI {
  pathPattern(pathname: string): string;
  missKind(turns: Array<{ role: string }>, found: { empty?: Array<{ role: string }>; source: string } | null): string | null;
}

/** content/coverage.js: how much of the conversation region's visible text the turns hold. */
interface WfCoverageAPI {
  covered(root: ParentNode, site: WfSite, found: WfFound, turns: Array<{ text: string }>): WfCoverage | null;
  siteCount(root: ParentNode, site: WfSite): number | null;
  settledMiss(root: ParentNode, site: WfSite, found: WfFound, turns: Array<{ role: string; text: string }>,
    opts?: { generic?: boolean }): { kind: string; detail: string } | null;
  LOST_TEXT_BELOW: number;
}

interface WfCoverage {
  share: number;
  region: number;
  turns: number;
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
  markdown?: string;
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
