// The message protocol between content scripts, the side panel and the worker, as types
// (extension/shared/protocol.js checks the same at run time). Ambient like types.d.ts.

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
  'panel:forget-apply': { host: string; confirm: string; documents?: string };
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
  'panel:conversation-markdown': { url: string };
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
  readonly PANEL_CONVERSATION_MARKDOWN: 'panel:conversation-markdown';
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
