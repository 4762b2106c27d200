/* Reads cases written by tests/c_abi.rs and prints the blocks parser-core finds, for the Rust test
 * to compare with Cline's expected blocks. Also checks the error paths of the C ABI.
 *
 * Input records: "W <len>\n<bytes>\n" (whole parse, then a stream fed one byte at a time) or
 * "P <len>\n<bytes>\n" (a stream fed one byte at a time, printed at every code-point boundary).
 * Output: for each rendering, "=\n" then per block "T <partial>\n" + str(content), or
 * "U <partial> <params>\n" + str(name) + per param str(name) + str(value); str(s) = "<len>:s\n".
 * Exit status 0, or 1 with a message on stderr. */
#include "parser_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCKS 4096
#define PARAMS 8192
#define TEXT (1 << 20)

static pc_block_slot block_slots[BLOCKS];
static pc_param_slot param_slots[PARAMS];
static pc_block_slot stream_block_slots[BLOCKS];
static pc_param_slot stream_param_slots[PARAMS];
static uint8_t text_buf[TEXT];

_Static_assert(sizeof(pc_block_slot) == 8 * PC_SLOT_WORDS, "slot size");
_Static_assert(sizeof(pc_stream) == 8 * PC_STREAM_WORDS, "stream size");

static void fail(const char *what, int code) {
  fprintf(stderr, "FAIL: %s (code %d)\n", what, code);
  exit(1);
}

static void put_str(const uint8_t *base, pc_span s) {
  printf("%zu:", s.end - s.start);
  fwrite(base + s.start, 1, s.end - s.start, stdout);
  putchar('\n');
}

static void render(const pc_blocks *view, const uint8_t *base) {
  printf("=\n");
  size_t n = pc_blocks_len(view);
  for (size_t i = 0; i < n; i++) {
    pc_block b;
    int r = pc_blocks_get(view, i, &b);
    if (r != PC_OK) fail("pc_blocks_get", r);
    if (b.kind == PC_TEXT) {
      printf("T %d\n", b.partial);
      put_str(base, b.span);
    } else {
      printf("U %d %zu\n", b.partial, b.param_count);
      put_str(base, b.span);
      for (size_t j = 0; j < b.param_count; j++) {
        pc_param p;
        r = pc_blocks_param(view, i, j, &p);
        if (r != PC_OK) fail("pc_blocks_param", r);
        put_str(base, p.name);
        put_str(base, p.value);
      }
      pc_param extra;
      if (pc_blocks_param(view, i, b.param_count, &extra) != PC_ERR_RANGE) fail("param past the end", 0);
    }
  }
  pc_block past;
  if (pc_blocks_get(view, n, &past) != PC_ERR_RANGE) fail("block past the end", 0);
}

static void stream_render(pc_stream *s) {
  pc_blocks view;
  int r = pc_stream_blocks(s, &view);
  if (r != PC_OK) fail("pc_stream_blocks", r);
  size_t len;
  const uint8_t *text = pc_stream_text(s, &len);
  if (text != text_buf) fail("pc_stream_text is not the text buffer", 0);
  render(&view, text);
}

static void check_errors(void) {
  pc_blocks view;
  pc_error e;
  const uint8_t bad[] = "ok<read_file>\xff";
  if (pc_parse(NULL, 3, block_slots, BLOCKS, param_slots, PARAMS, &view, &e) != PC_ERR_NULL) fail("NULL input", 0);
  if (pc_parse(bad, 14, block_slots, BLOCKS, param_slots, PARAMS, &view, &e) != PC_ERR_UTF8 || e.offset != 13)
    fail("invalid UTF-8", 0);
  if (pc_blocks_len(&view) != 2) fail("blocks before invalid UTF-8", 0);
  const uint8_t two[] = "a<read_file><path>x</path></read_file>b<list_files>";
  if (pc_parse(two, sizeof two - 1, block_slots, 2, param_slots, PARAMS, &view, &e) != PC_ERR_BLOCKS_FULL ||
      e.offset != 39 || e.available != 2 || pc_blocks_len(&view) != 3)
    fail("blocks full", 0);
  if (pc_parse(two, sizeof two - 1, block_slots, 8, param_slots, 0, &view, NULL) != PC_ERR_PARAMS_FULL)
    fail("params full", 0);

  pc_stream s;
  uint8_t small[8];
  pc_progress p;
  if (pc_stream_init(&s, small, sizeof small, stream_block_slots, BLOCKS, stream_param_slots, PARAMS) != PC_OK)
    fail("init", 0);
  if (pc_stream_push(&s, (const uint8_t *)"0123456789", 10, &p, &e) != PC_ERR_TEXT_FULL || e.needed != 10 ||
      e.available != 8)
    fail("text full", 0);
  if (pc_stream_push(&s, (const uint8_t *)"\xc3", 1, &p, &e) != PC_OK) fail("half a character", 0);
  if (pc_stream_finish(&s, &e) != PC_ERR_INCOMPLETE || e.offset != 0) fail("incomplete", 0);
  if (pc_stream_push(&s, (const uint8_t *)"\xa9", 1, NULL, NULL) != PC_ERR_INCOMPLETE) fail("sticky", 0);
  pc_stream_reset(&s);
  if (pc_stream_push(&s, (const uint8_t *)"<read_fi", 8, &p, &e) != PC_OK) fail("after reset", 0);
  if (pc_stream_push(&s, NULL, 0, &p, &e) != PC_OK) fail("empty push", 0);
  if (pc_stream_init(NULL, small, 8, NULL, 0, NULL, 0) != PC_ERR_NULL) fail("NULL stream", 0);
  if (pc_blocks_len(NULL) != 0) fail("NULL view", 0);
}

int main(int argc, char **argv) {
  if (argc != 2) fail("usage: conformance CASES", 0);
  check_errors();
  FILE *f = fopen(argv[1], "rb");
  if (!f) fail("cannot open the cases", 0);
  static uint8_t input[TEXT];
  char mode;
  size_t len;
  pc_stream s;
  int r = pc_stream_init(&s, text_buf, TEXT, stream_block_slots, BLOCKS, stream_param_slots, PARAMS);
  if (r != PC_OK) fail("pc_stream_init", r);
  int c;
  while ((c = fgetc(f)) != EOF) {
    mode = (char)c;
    /* " <len>\n", read by hand: fscanf's "\n" would also eat the input's leading whitespace. */
    if (fgetc(f) != ' ') fail("bad cases file", 0);
    len = 0;
    while ((c = fgetc(f)) >= '0' && c <= '9') len = len * 10 + (size_t)(c - '0');
    if (c != '\n') fail("bad cases file", 0);
    if (len > TEXT || fread(input, 1, len, f) != len || fgetc(f) != '\n') fail("bad cases file", 0);
    pc_stream_reset(&s);
    if (mode == 'W') {
      pc_blocks view;
      pc_error e;
      r = pc_parse(input, len, block_slots, BLOCKS, param_slots, PARAMS, &view, &e);
      if (r != PC_OK) fail("pc_parse", r);
      render(&view, input);
      for (size_t i = 0; i < len; i++)
        if ((r = pc_stream_push(&s, input + i, 1, NULL, NULL)) != PC_OK) fail("pc_stream_push", r);
      if ((r = pc_stream_finish(&s, NULL)) != PC_OK) fail("pc_stream_finish", r);
      stream_render(&s);
    } else if (mode == 'P') {
      stream_render(&s);
      for (size_t i = 0; i < len; i++) {
        pc_progress p;
        if ((r = pc_stream_push(&s, input + i, 1, &p, NULL)) != PC_OK) fail("pc_stream_push", r);
        if (i + 1 == len || (input[i + 1] & 0xC0) != 0x80) stream_render(&s);
      }
    } else {
      fail("bad mode", mode);
    }
    printf("end\n");
  }
  fclose(f);
  return 0;
}
