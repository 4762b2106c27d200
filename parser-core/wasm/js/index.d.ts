/** A text block, as in Cline's `AssistantMessageContent`. */
export interface TextContent {
  type: "text";
  content: string;
  partial: boolean;
}

/** A tool-use block, as in Cline's `AssistantMessageContent`. */
export interface ToolUse {
  type: "tool_use";
  name: string;
  params: Record<string, string>;
  partial: boolean;
  call_id: string;
  isNativeToolCall: false;
}

export type AssistantMessageContent = TextContent | ToolUse;

/** Cline's parseAssistantMessageV2, byte-exact. */
export function parseAssistantMessageV2(assistantMessage: string): AssistantMessageContent[];

/** As Cline's: extra tool names (in a namespace) for later parses and new StreamParsers. */
export function setDynamicToolUseNames(namespace: string, names: string[]): void;

/** Incremental parsing: after each push, the blocks of all the text so far. */
export class StreamParser {
  constructor(options?: { toolNames?: string[]; paramNames?: string[] });
  /** Indices of the blocks that the last push completed. */
  completed: { start: number; end: number };
  /**
   * Append a chunk: the blocks of all the text so far. The array is the parser's own and the
   * next push updates it in place (`.slice()` it to keep a snapshot); unchanged blocks stay the
   * same objects.
   */
  push(chunk: string): AssistantMessageContent[];
  /** The final blocks, as a copy. */
  finish(): AssistantMessageContent[];
  /**
   * Start a new reply, keeping the parser's storage. The last reply's blocks (and the array push
   * returned) stay as they are; their long strings are flattened, so that holding them costs
   * the next reply's garbage collections nothing.
   */
  reset(): void;
  /** Free the parser's memory now (otherwise the GC frees it); the blocks stay as reset() leaves them. */
  free(): void;
}
