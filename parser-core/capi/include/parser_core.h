/* parser_core.h — C interface to parser-core, a byte-exact port of Cline's reply parser
 * (parseAssistantMessageV2). Written by hand; the Rust side (parser-core/capi/src/lib.rs) defines
 * the same items, and the C test checks the constants and sizes against it.
 *
 * Link with libparser_core_c.a (plus -lpthread -ldl -lm on Linux) or libparser_core_c.so.
 *
 * - Nothing allocates: the caller supplies every buffer (block and param slots, a stream's text
 *   buffer and the pc_stream itself), on the stack, in static memory or from its own allocator;
 *   uninitialised memory is fine.
 * - Blocks are spans: byte offsets into the caller's input (whole parse) or into the stream's text
 *   buffer (stream). Text content and param values are trimmed as JavaScript trims.
 * - Every error is a return code (PC_ERR_*), with details in an optional pc_error; nothing aborts.
 * - Cline's grammar (27 tools, 45 params). Not thread-safe per object; distinct objects are
 *   independent.
 */
#ifndef PARSER_CORE_H
#define PARSER_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PC_OK 0
#define PC_ERR_NULL (-1)        /* a required pointer is NULL (or slots are misaligned) */
#define PC_ERR_UTF8 (-2)        /* invalid UTF-8 at error.offset; everything before it is parsed */
#define PC_ERR_BLOCKS_FULL (-3) /* no block slot left for the tag at error.offset (capacity in error.available) */
#define PC_ERR_PARAMS_FULL (-4) /* no param slot left for the tag at error.offset */
#define PC_ERR_TEXT_FULL (-5)   /* the stream's text buffer cannot take the chunk; nothing was taken */
#define PC_ERR_RANGE (-6)       /* no block or param with that index */
#define PC_ERR_INCOMPLETE (-7)  /* the stream ended inside a UTF-8 character */

#define PC_TEXT 0
#define PC_TOOL_USE 1

#define PC_SLOT_WORDS 6
#define PC_BLOCKS_WORDS 16
#define PC_STREAM_WORDS 48

/* Storage for one block / one param (opaque). */
typedef struct pc_block_slot { uint64_t opaque[PC_SLOT_WORDS]; } pc_block_slot;
typedef struct pc_param_slot { uint64_t opaque[PC_SLOT_WORDS]; } pc_param_slot;

/* A view of a reply's blocks (opaque). Valid while the input (or the stream's buffers) and the
 * slots are unchanged; a stream's view is valid until its next push or reset. */
typedef struct pc_blocks { uint64_t opaque[PC_BLOCKS_WORDS]; } pc_blocks;

/* A streaming parser (opaque), living wherever the caller puts it; it owns nothing. */
typedef struct pc_stream { uint64_t opaque[PC_STREAM_WORDS]; } pc_stream;

typedef struct pc_span { size_t start, end; } pc_span; /* bytes [start, end) */

typedef struct pc_block {
  int32_t kind;       /* PC_TEXT or PC_TOOL_USE */
  int32_t partial;    /* 1 while unfinished */
  pc_span span;       /* text: its content; tool use: its name */
  size_t param_count; /* tool use: number of params, in Cline's key order */
  size_t ordinal;     /* tool use: 0, 1, 2... among the reply's tools */
} pc_block;

typedef struct pc_param {
  pc_span name;
  pc_span value; /* as Cline has it (trimmed) */
  pc_span raw;   /* untrimmed */
} pc_param;

typedef struct pc_error {
  size_t offset;    /* UTF8, BLOCKS_FULL, PARAMS_FULL, INCOMPLETE: byte offset */
  size_t needed;    /* TEXT_FULL: bytes the chunk needed */
  size_t available; /* TEXT_FULL: bytes free; BLOCKS_FULL / PARAMS_FULL: capacity */
} pc_error;

typedef struct pc_progress {
  size_t changed_start, changed_end;     /* blocks that are new or may have changed */
  size_t completed_start, completed_end; /* blocks that became complete in this push */
} pc_progress;

/* Whole parse of input[0..len) into block_cap block slots and param_cap param slots; the view goes
 * to *out (also on PC_ERR_UTF8 and the FULL errors: the blocks of the input before error->offset).
 * `error` may be NULL. */
int pc_parse(const uint8_t *input, size_t len, pc_block_slot *blocks, size_t block_cap,
             pc_param_slot *params, size_t param_cap, pc_blocks *out, pc_error *error);

size_t pc_blocks_len(const pc_blocks *blocks);
int pc_blocks_get(const pc_blocks *blocks, size_t i, pc_block *out);
int pc_blocks_param(const pc_blocks *blocks, size_t i, size_t j, pc_param *out);

/* A stream: its text is copied into text[0..text_cap); blocks and params go into the slots. */
int pc_stream_init(pc_stream *stream, uint8_t *text, size_t text_cap, pc_block_slot *blocks,
                   size_t block_cap, pc_param_slot *params, size_t param_cap);
/* Append bytes (UTF-8 may be cut anywhere). `progress` and `error` may be NULL. Errors other than
 * PC_ERR_TEXT_FULL are sticky until pc_stream_reset. */
int pc_stream_push(pc_stream *stream, const uint8_t *chunk, size_t len, pc_progress *progress,
                   pc_error *error);
int pc_stream_finish(pc_stream *stream, pc_error *error);
int pc_stream_reset(pc_stream *stream);
int pc_stream_blocks(const pc_stream *stream, pc_blocks *out);
/* The stream's text so far (it starts at the caller's text buffer); *len gets its length. The
 * spans of the stream's blocks are offsets into it. Valid until the next push or reset. */
const uint8_t *pc_stream_text(const pc_stream *stream, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* PARSER_CORE_H */
