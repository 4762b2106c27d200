// parser-core's JavaScript glue over the module's raw exports (see ../src/lib.rs for the layout of
// an answer). Shared by the CommonJS and the ES module entries; build.sh wraps it in each.
//
// Strings: the glue encodes a JS string with TextEncoder.encodeInto (a lone surrogate becomes
// U+FFFD), and the module answers in UTF-16 offsets into that same JS string, which the glue then
// slices. So blocks hold exactly the characters of the caller's string, astral characters and
// lone surrogates included, as Cline's parser would return them.

const NANOID_ALPHABET = "useandom-26T198340PX75pxJACKVERYMINDBUSHWOLF_GQZbfghjklqvwyzrict";
const ALPHABET_CODES = Uint8Array.from(NANOID_ALPHABET, (c) => c.charCodeAt(0));

// Random bytes are drawn 1 KiB at a time (128 ids): one getRandomValues call costs about as
// much as parsing a tool call, as nanoid's own pool does.
const pool = new Uint8Array(1024);
let poolAt = pool.length;

function nanoid8() {
  if (poolAt + 8 > pool.length) {
    const c = globalThis.crypto;
    if (c && typeof c.getRandomValues === "function") c.getRandomValues(pool);
    else for (let i = 0; i < pool.length; i++) pool[i] = (Math.random() * 256) | 0;
    poolAt = 0;
  }
  const b = pool;
  const i = poolAt;
  poolAt += 8;
  // One string, not eight growing ones.
  return String.fromCharCode(
    ALPHABET_CODES[b[i] & 63], ALPHABET_CODES[b[i + 1] & 63], ALPHABET_CODES[b[i + 2] & 63],
    ALPHABET_CODES[b[i + 3] & 63], ALPHABET_CODES[b[i + 4] & 63], ALPHABET_CODES[b[i + 5] & 63],
    ALPHABET_CODES[b[i + 6] & 63], ALPHABET_CODES[b[i + 7] & 63],
  );
}

// The answer's `moved` word when no single string of the last block moved (see ../src/lib.rs).
const NOT_MOVED = 0xffffffff;

function createApi(w) {
  const encoder = new TextEncoder();
  const nameEncoder = new TextEncoder();
  const errors = {
    "-1": "input is not UTF-8",
    "-2": "no such stream or grammar (was the parser freed?)",
    "-3": "a tag name is empty, contains '<' or '>', or starts with '/'",
    "-4": "a tag name is longer than 128 bytes, or there are too many names",
    "-5": "length out of range",
  };
  function check(r) {
    if (r < 0) throw new Error("parser-core: " + (errors[r] || "error " + r));
    return r;
  }

  // Views of the module's memory, remade only when the memory grew or a buffer moved. When the
  // memory grows its old buffer is detached and every view of it has length 0: that is the
  // test, cheaper than reading `w.memory.buffer` on every call.
  let inView = new Uint8Array(0);
  let inPtr = -1;
  let words32 = new Uint32Array(0);

  // Encode `str` into the module's input buffer: its length in bytes (`lastAscii`: all ASCII).
  let lastAscii = 0;
  function put(str) {
    const len = str.length;
    const max = len * 3;
    if (inPtr < 0 || max > inView.length || inView.length === 0) {
      const size = Math.max(max, 1024);
      inPtr = w.input_buffer(size);
      inView = new Uint8Array(w.memory.buffer, inPtr, size);
      words32 = new Uint32Array(w.memory.buffer);
    }
    // A short chunk is usually ASCII: copied by hand, it skips encodeInto's call overhead (from
    // about 16 characters on, encodeInto is as fast or faster).
    if (len < 16) {
      let i = 0;
      for (; i < len; i++) {
        const c = str.charCodeAt(i);
        if (c >= 0x80) break;
        inView[i] = c;
      }
      if (i === len) {
        lastAscii = 1;
        return len;
      }
    }
    const { written } = encoder.encodeInto(str, inView);
    lastAscii = written === len ? 1 : 0;
    return written;
  }

  // The last answer's words, as a view of the whole memory and the index of its first word.
  function words() {
    if (words32.length === 0) {
      words32 = new Uint32Array(w.memory.buffer);
      inPtr = -1;
    }
    return words32;
  }

  // Names, each followed by NUL, into the input buffer: their byte length.
  function putNames(names) {
    const joined = names.map((n) => n + "\0").join("");
    if (joined.includes("\0\0") || joined === "\0") check(-3);
    const bytes = nameEncoder.encode(joined);
    const ptr = w.input_buffer(bytes.length);
    inPtr = -1; // the input buffer may have moved
    new Uint8Array(w.memory.buffer, ptr, bytes.length).set(bytes);
    return bytes.length;
  }

  // Cline's tools plus every namespace's dynamic names, as getToolUseNames() has them.
  const dynamic = new Map();
  let defaultGrammar = 0;
  // A grammar's tables live as long as the module; each distinct name list is built once.
  const grammars = new Map();
  function cached(key, build) {
    let g = grammars.get(key);
    if (g === undefined) {
      g = build();
      grammars.set(key, g);
    }
    return g;
  }

  function setDynamicToolUseNames(namespace, names) {
    dynamic.set(namespace, new Set(names.map((n) => n.trim()).filter(Boolean)));
    const extra = [...new Set([...dynamic.values()].flatMap((s) => [...s]))];
    defaultGrammar =
      extra.length === 0
        ? 0
        : cached(JSON.stringify(["cline+", extra]), () => check(w.grammar_with_tools(putNames(extra))));
  }

  function customGrammar(toolNames, paramNames) {
    const tools = [...new Set(toolNames)];
    const params = [...new Set(paramNames)];
    return cached(JSON.stringify([tools, params]), () =>
      check(w.grammar_new(putNames([...tools, ...params]), tools.length, params.length)),
    );
  }

  // A param name as a property key (internalized: a keyed store with it is fast, where one
  // with a fresh slice of the text is not). Names are the grammars' param names: few.
  const keyCache = new Map();
  function keyOf(name) {
    let key = keyCache.get(name);
    if (key === undefined) {
      key = Object.keys({ [name]: 0 })[0];
      keyCache.set(name, key);
    }
    return key;
  }

  // A params object of `keys` and `values`, assigned in order as readBlock does. Unrolled for
  // the usual few params: faster than a loop of keyed stores or cloning the last one.
  function paramsOf(keys, values, count) {
    const o = {};
    switch (count) {
      case 3:
        o[keys[0]] = values[0];
        o[keys[1]] = values[1];
        o[keys[2]] = values[2];
        return o;
      case 2:
        o[keys[0]] = values[0];
        o[keys[1]] = values[1];
        return o;
      case 1:
        o[keys[0]] = values[0];
        return o;
      default:
        for (let p = 0; p < count; p++) o[keys[p]] = values[p];
        return o;
    }
  }

  // One block from the answer words at `i`; the index after it is left in `readEnd`.
  let readEnd = 0;
  function readBlock(o, i, slice, callId) {
    const kind = o[i];
    const partial = (kind & 2) !== 0;
    const count = o[i + 3];
    if ((kind & 1) === 0) {
      readEnd = i + 5;
      return { type: "text", content: slice(o[i + 1], o[i + 2], 0), partial };
    }
    const name = slice(o[i + 1], o[i + 2], 1);
    const ordinal = o[i + 4];
    const params = {};
    let k = i + 5;
    for (let p = 0; p < count; p++, k += 4) {
      params[slice(o[k], o[k + 1], 2 + 2 * p)] = slice(o[k + 2], o[k + 3], 3 + 2 * p);
    }
    readEnd = k;
    return { type: "tool_use", name, params, partial, call_id: callId(ordinal), isNativeToolCall: false };
  }

  /**
   * Cline's parseAssistantMessageV2: the reply's text and tool-use blocks, byte-exact.
   * @param {string} assistantMessage
   */
  function parseAssistantMessageV2(assistantMessage) {
    if (typeof assistantMessage !== "string") throw new TypeError("parseAssistantMessageV2 takes a string");
    return wholeParse(assistantMessage, defaultGrammar, nanoid8);
  }

  // The blocks of all of `s` with `grammar`'s names, call ids from `callId(ordinal)`.
  function wholeParse(s, grammar, callId) {
    const n = check(w.parse(put(s), lastAscii, grammar));
    const o = words();
    const blocks = new Array(n);
    const slice = (a, b) => s.slice(a, b);
    let i = (w.out_ptr() >> 2) + 5;
    for (let b = 0; b < n; b++) {
      blocks[b] = readBlock(o, i, slice, callId);
      i = readEnd;
    }
    return blocks;
  }

  // The first chunk of `ends` (the end offset of each of a list of strings, ascending) that ends
  // after `at`.
  function firstAfter(ends, at) {
    let lo = 0;
    let hi = ends.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid] > at) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  // Pieces `strings[from..]` of `a..b` (`ends` their end offsets, `base` where the first starts).
  function slicePieces(strings, ends, base, from, a, b, out) {
    for (let k = from; k < strings.length; k++) {
      const start = k === 0 ? base : ends[k - 1];
      if (start >= b) break;
      const piece = strings[k];
      out += piece.slice(Math.max(0, a - start), Math.min(piece.length, b - start));
    }
    return out;
  }

  // A stream's text: pieces, sliced without flattening the whole. The chunks since the last cut
  // are joined by `+=` (a rope: no copy yet), cut into a piece when it reaches PIECE units, when
  // a slice reaches into it, or when it is handed to the module; V8 flattens a piece the first
  // time it is sliced or encoded. So every character is copied at most once, a push costs a
  // concatenation, and the only array that grows with the reply is the list of pieces.
  const PIECE = 16384;
  class Text {
    constructor() {
      this.pieces = [];
      this.pieceEnds = [];
      this.rope = ""; // the text since `base`, not yet a piece
      this.base = 0;
      this.length = 0;
      // The last chunk pushed and where it starts: a growing string that ends where the text
      // ends is extended by the chunk itself, with no slicing.
      this.lastChunk = "";
      this.lastStart = 0;
    }
    push(chunk) {
      this.lastChunk = chunk;
      this.lastStart = this.length;
      this.rope += chunk;
      this.length += chunk.length;
      if (this.rope.length >= PIECE) this.cut();
    }
    cut() {
      if (this.length === this.base) return;
      this.pieces.push(this.rope);
      this.pieceEnds.push(this.length);
      this.rope = "";
      this.base = this.length;
    }
    // Drop every string (the stream is done with them; see StreamParser._release).
    release() {
      this.pieces.length = 0;
      this.pieceEnds.length = 0;
      this.rope = "";
      this.lastChunk = "";
    }
    // The pieces from the one holding offset `a` on (the rope since the last cut counts as one).
    piecesFrom(a) {
      return this.pieces.length - firstAfter(this.pieceEnds, a) + (this.length > this.base ? 1 : 0);
    }
    slice(a, b) {
      if (b > this.base) this.cut();
      return slicePieces(this.pieces, this.pieceEnds, 0, firstAfter(this.pieceEnds, a), a, b, "");
    }
  }

  // JavaScript's trim() whitespace (WhiteSpace and LineTerminator): the set Cline trims every
  // text and param value by, and parser-core's trim too.
  function isSpace(c) {
    if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
    if (c < 0xa0) return false;
    return (
      c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
      c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
    );
  }

  function isHighSurrogate(c) {
    return c >= 0xd800 && c <= 0xdbff;
  }

  // Text the glue keeps to itself before handing it to the module (see StreamParser.push): at
  // most this many UTF-16 units, so that the push that hands them over stays short.
  const HOLD = 8192;

  const registry =
    typeof FinalizationRegistry === "function" ? new FinalizationRegistry((h) => w.stream_free(h)) : null;

  /**
   * Streaming: push chunks; after each push the blocks equal parseAssistantMessageV2 of all the
   * text pushed so far, for work proportional to the chunk. Call ids are stable per tool.
   */
  class StreamParser {
    /**
     * @param {{toolNames?: string[], paramNames?: string[]}} [options] your own tag names
     *   (default: Cline's tools, plus those set with setDynamicToolUseNames, and Cline's params)
     */
    constructor(options) {
      const custom = options && (options.toolNames || options.paramNames);
      const grammar = custom
        ? customGrammar(options.toolNames || [], options.paramNames || [])
        : defaultGrammar;
      this._handle = check(w.stream_new(grammar));
      this._grammar = grammar;
      // Whether a name holds a character outside the BMP (two UTF-16 units): see push.
      const names = custom
        ? [...(options.toolNames || []), ...(options.paramNames || [])]
        : [...dynamic.values()].flatMap((set) => [...set]);
      this._astral = names.some((n) => /[\uD800-\uDBFF]/.test(n));
      this._token = {};
      this._callIdFn = (ordinal) => this._callId(ordinal);
      if (registry) registry.register(this, this._handle, this._token);
      this._clear();
    }
    _clear() {
      const text = new Text();
      this._text = text;
      this._blocks = [];
      this._ids = [];
      /** Indices of the blocks the last push completed: {start, end}. */
      this.completed = { start: 0, end: 0 };
      // Slicers for readBlock, made once per reply rather than once per push (fewer objects
      // for the GC). `_plain` for blocks before the last.
      this._plain = (a, b) => text.slice(a, b);
      // What `_readLast` built last, for `_grown`: the block, its params' keys and values.
      this._lastBlock = null;
      this._lastKeys = [];
      this._lastValues = [];
      this._lastCount = 0;
      // The module has the text's first `_synced` units; the glue holds the rest (see push).
      this._synced = 0;
      // Whether the text up to `_synced` is flat pieces just made (see `_growing`).
      this._rebase = false;
      // The last push's blocks when they are not `_blocks` (a whole parse, see push).
      this._answered = null;
      // When the text is known to end inside the last block's growing string: which one (the
      // answer's `moved`: 0 a text's content, 1 + p param p's value; -1 not known), its slot
      // below, and for a param the last UTF-16 unit of its name (-1 for a text).
      this._grow = -1;
      this._growSlot = null;
      this._growLast = -1;
      // The last block's strings (slot 0: a text's content, 1: a tool's name, 2 + 2p and 3 + 2p:
      // param p's name and value) are kept; one that kept its start and grew becomes the old
      // string plus the new part, so a long growing value costs only its new characters, and an
      // unchanged one is reused. Correct for any block: the text only grows, so
      // text.slice(a, b) for b >= g.b extends g.s. A slot is read before it is rewritten.
      // Extended push after push, a long string is a rope of one node per push, which every
      // scavenge of the young generation copies while it lives; so when a push has just made
      // the held text a flat piece (`_rebase`, see push), the strings are sliced afresh from
      // the pieces: a few nodes, and the older ones are garbage. (16-char pushes on
      // benches/wasm_goals.js's 200 KB write: about a third less time.)
      const grow = [];
      this._slots = grow;
      // `g.n`: the strings appended to `g.s` since it was last sliced from the pieces. A rebase
      // costs a node per piece the string spans, so it is done only when fewer pieces than
      // appends (amortised O(1) per push: a text whose pushes often hold a `>` is cut into many
      // short pieces, and re-slicing a long string across all of them on every hand-over would
      // make a push cost the reply's length).
      this._growing = (a, b, slot) => {
        const g = grow[slot];
        if (g === undefined) {
          const s = text.slice(a, b);
          grow[slot] = { a, b, s, n: 0 };
          return s;
        }
        let s;
        if (g.a === a && g.b <= b && !(this._rebase && g.n > text.piecesFrom(a))) {
          if (g.b === b) s = g.s;
          else {
            g.n++;
            if (g.b === text.lastStart && b === text.length) s = g.s + text.lastChunk;
            else if (g.b >= text.lastStart) s = g.s + text.lastChunk.slice(g.b - text.lastStart, b - text.lastStart);
            else s = g.s + text.slice(g.b, b);
          }
        } else {
          s = text.slice(a, b);
          g.n = 0;
        }
        g.a = a;
        g.b = b;
        g.s = s;
        return s;
      };
    }
    // The last block after a push that only moved its growing string (`moved`: 0 a text's
    // content, 1 + p param p's value) to `start..end`: the previous block with that string
    // replaced — a new object, as every changed block is, without re-reading the rest.
    _grown(moved, start, end) {
      return this._withGrown(moved, this._growing(start, end, moved === 0 ? 0 : 1 + 2 * moved));
    }
    // The last block with its growing string (`moved` as for `_grown`) now `s`.
    _withGrown(moved, s) {
      const prev = this._lastBlock;
      let block;
      if (moved === 0) {
        block = { type: "text", content: s, partial: prev.partial };
      } else {
        const values = this._lastValues;
        values[moved - 1] = s;
        block = {
          type: "tool_use",
          name: prev.name,
          params: paramsOf(this._lastKeys, values, this._lastCount),
          partial: prev.partial,
          call_id: prev.call_id,
          isNativeToolCall: false,
        };
      }
      this._lastBlock = block;
      return block;
    }
    // The last block, from the answer words at `i`, as readBlock reads it; its params' keys
    // and values are kept (the first `_lastCount` of arrays reused from block to block) for
    // `_grown`.
    _readLast(o, i) {
      const grow = this._growing;
      const kind = o[i];
      const partial = (kind & 2) !== 0;
      let block;
      if ((kind & 1) === 0) {
        readEnd = i + 5;
        block = { type: "text", content: grow(o[i + 1], o[i + 2], 0), partial };
      } else {
        const name = grow(o[i + 1], o[i + 2], 1);
        const count = o[i + 3];
        const keys = this._lastKeys;
        const values = this._lastValues;
        this._lastCount = count;
        let k = i + 5;
        for (let p = 0; p < count; p++, k += 4) {
          keys[p] = keyOf(grow(o[k], o[k + 1], 2 + 2 * p));
          values[p] = grow(o[k + 2], o[k + 3], 3 + 2 * p);
        }
        readEnd = k;
        const params = paramsOf(keys, values, count);
        block = { type: "tool_use", name, params, partial, call_id: this._callId(o[i + 4]), isNativeToolCall: false };
      }
      this._lastBlock = block;
      return block;
    }
    // Whether `chunk`, appended to a text that ends inside the growing string `_grow`, surely
    // leaves every block but that string as it is. Only a `>` ends a tag: in a text, any `>`
    // might end a tool's opening tag; in a param's value only the `>` of its closing tag does,
    // so a `>` after any other character than the name's last one is plain text.
    _onlyGrows(chunk) {
      let j = chunk.indexOf(">");
      if (j < 0) return true;
      const last = this._growLast;
      if (last < 0) return false;
      // (One `indexOf(">")` per `>` costs less than one search for the two characters.)
      do {
        if (j > 0) {
          if (chunk.charCodeAt(j - 1) === last) return false;
        } else {
          const prev = this._text.lastChunk;
          if (prev.length === 0 || prev.charCodeAt(prev.length - 1) === last) return false;
        }
        j = chunk.indexOf(">", j + 1);
      } while (j >= 0);
      return true;
    }
    _callId(ordinal) {
      return this._ids[ordinal] || (this._ids[ordinal] = nanoid8());
    }
    /**
     * Append a chunk; returns the blocks now. The array is the parser's own, updated in place by
     * the next push (copy it with `.slice()` to keep a snapshot): copying every block's reference
     * on every push would make a reply of many blocks quadratic. Unchanged blocks are the same
     * objects as before; a changed block is a new object.
     * @param {string} chunk
     */
    push(chunk) {
      if (typeof chunk !== "string") throw new TypeError("push takes a string");
      const text = this._text;
      const grow = this._grow;
      if (grow >= 0 && text.length + chunk.length - this._synced <= HOLD && this._onlyGrows(chunk)) {
        // The chunk cannot end a tag, so it only extends the growing string, up to its last
        // character that trim() keeps: the module would say just that. It gets the text later,
        // in one push (at most HOLD units, or when a chunk may end a tag).
        const blocks = this._blocks;
        const at = text.length;
        let j = chunk.length - 1;
        while (j >= 0 && isSpace(chunk.charCodeAt(j))) j--;
        if (j >= 0) {
          // The string so far ends at g.b; the text after it, up to `at`, is whitespace.
          const g = this._growSlot;
          const part = j + 1 === chunk.length ? chunk : chunk.slice(0, j + 1);
          let s;
          if (g.b === at) s = g.s + part;
          else if (g.b >= text.lastStart) s = g.s + text.lastChunk.slice(g.b - text.lastStart) + part;
          else s = g.s + text.slice(g.b, at) + part;
          g.b = at + j + 1;
          g.n++;
          g.s = s;
          blocks[blocks.length - 1] = this._withGrown(grow, s);
        }
        text.push(chunk);
        this._answered = null;
        return blocks;
      }
      const from0 = this._synced;
      text.push(chunk);
      this._synced = text.length;
      let str;
      if (from0 === text.lastStart) str = chunk;
      else if (from0 === text.base) {
        // The held text is the rope since the last cut: encoded as it is (encodeInto flattens
        // it once, in place), then made a piece.
        str = text.rope;
        text.cut();
        str.charCodeAt(0); // flattens the rope (encodeInto would walk it character by character)
        this._rebase = true;
      } else str = text.slice(from0, text.length);
      // A text ending in a high surrogate, with a name that holds a pair: the module reads
      // UTF-8, where the half alone would become U+FFFD and a name cut there would never match.
      // It gets that unit with the next push instead, and this push is answered by a whole
      // parse (so only such names pay for it, on a push that cuts a pair).
      const cut = this._astral && isHighSurrogate(str.charCodeAt(str.length - 1));
      if (cut) {
        str = str.slice(0, -1);
        this._synced = text.length - 1;
      }
      const len = put(str);
      const at = check(w.stream_push(this._handle, len, lastAscii));
      const o = words();
      const n = o[at];
      const from = o[at + 1];
      const completed = this.completed;
      if (completed.start !== o[at + 2] || completed.end !== o[at + 3]) {
        this.completed = { start: o[at + 2], end: o[at + 3] };
      }
      const blocks = this._blocks;
      const moved = o[at + 4];
      this._grow = -1;
      if (moved !== NOT_MOVED) {
        const start = o[at + 5];
        const end = o[at + 6];
        blocks[n - 1] = this._grown(moved, start, end);
        // An empty string has no start yet (trim() moves it): the next push asks the module.
        if (start < end) {
          this._grow = moved;
          this._growSlot = this._slots[moved === 0 ? 0 : 1 + 2 * moved];
          if (moved === 0) this._growLast = -1;
          else {
            const name = this._lastKeys[moved - 1];
            this._growLast = name.charCodeAt(name.length - 1);
          }
        }
      } else if (from < n || blocks.length !== n) {
        // Overwrite in place: shrinking the array (`length = from`) and pushing again would
        // make V8 trim and regrow its backing store on every push.
        if (blocks.length > n) blocks.length = n;
        let i = at + 5;
        for (let b = Math.min(from, blocks.length); b < n; b++) {
          const block = b === n - 1 ? this._readLast(o, i) : readBlock(o, i, this._plain, this._callIdFn);
          if (b < blocks.length) blocks[b] = block;
          else blocks.push(block);
          i = readEnd;
        }
      }
      this._rebase = false;
      this._answered = cut ? wholeParse(text.slice(0, text.length), this._grammar, this._callIdFn) : null;
      return this._answered || blocks;
    }
    /** End of the reply: the final blocks, a copy (trailing text stays partial, as in Cline). */
    finish() {
      return (this._answered || this._blocks).slice();
    }
    /** Start a new reply, keeping the parser's storage. */
    reset() {
      check(w.stream_reset(this._handle));
      this._release();
      this._clear();
    }
    // Let go of the reply that ended. Its growing strings are ropes of one cons string per push,
    // still reachable from the blocks the caller may hold (and from the parser's own array and
    // holders: old objects by now, written on every push, so while dead they are still roots of
    // the young generation until the next full collection): flattened, each is one string and
    // its rope is garbage; the holders are emptied. Otherwise the next reply's scavenges copy
    // and promote the last one's ropes (about half of a short push's cost, measured by
    // benches/wasm_goals.js; the README's Performance section has the figures). The blocks
    // array is left as it is: the caller may hold it.
    _release() {
      for (const g of this._slots) {
        if (g !== undefined) {
          g.s.charCodeAt(0); // flattens it, in place: the blocks' strings are the same strings
          g.s = "";
        }
      }
      this._slots.length = 0;
      this._lastValues.length = 0;
      this._lastBlock = null;
      this._growSlot = null;
      this._text.release();
    }
    /** Free the parser's memory now (otherwise it is freed when the object is collected). */
    free() {
      if (this._handle >= 0) {
        if (registry) registry.unregister(this._token);
        w.stream_free(this._handle);
        this._handle = -1;
        this._grow = -1; // every later push asks the module, which refuses it
        this._release();
      }
    }
  }

  // `_wasm`: the raw exports and memory, for tests and benchmarks; not a stable API.
  return { parseAssistantMessageV2, StreamParser, setDynamicToolUseNames, _wasm: w };
}
