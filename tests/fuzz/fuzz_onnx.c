/*
 * fuzz_onnx.c - libFuzzer target for the ONNX importer and the passes that
 * run on what it produces (sw_compiler/onnx_import.c, passes.c).
 *
 * The input is a serialized ModelProto.  Properties checked on every input:
 *   - a refusal names the model ("fuzz.onnx: ..."), from the importer and
 *     from the default passes alike;
 *   - an imported graph verifies (the importer runs ir_verify), goes
 *     through ir_run_default_passes or is refused with a message;
 *   - the text form round-trips: printing the graph, parsing the text and
 *     printing again gives the same text (compiler.h: the IR has a
 *     printable and parseable text form), for graphs whose constants hold
 *     at most TEXT_MAX_BYTES: constant folding may make tens of megabytes
 *     from a few bytes of model (a folded Range, up to its 64 MiB cap), and
 *     their hex text is printed and parsed for longer than libFuzzer's
 *     timeout under ASan without being a different case for the parser.
 */
#include "fuzz.h"

#include "sw_compiler/compiler.h"

#define TEXT_MAX_BYTES (1u << 20)

static void check_text_round_trip(const struct ir_graph *g) {
  struct ir_error err = {{0}};
  size_t bytes = 0;
  for (int t = 0; t < g->n_tensors; t++) bytes += g->tensors[t].nbytes;
  if (bytes > TEXT_MAX_BYTES) return;
  char *text = ir_print_str(g, 0);
  struct ir_graph *h = ir_parse(text, "printed.ir", &err);
  FUZZ_CHECK(h != NULL, "the printed graph does not parse: %s\n%s", err.msg, text);
  char *again = ir_print_str(h, 0);
  FUZZ_CHECK(!strcmp(text, again), "print(parse(print(g))) differs\n--- first\n%s\n--- second\n%s",
             text, again);
  free(again);
  free(text);
  ir_graph_free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct ir_error err = {{0}};
  struct ir_graph *g = onnx_import_buffer(data, size, "fuzz.onnx", &err);
  if (!g) {
    FUZZ_CHECK(fuzz_names_file(err.msg, "fuzz.onnx"), "message '%s'", err.msg);
    return 0;
  }
  check_text_round_trip(g);
  if (ir_run_default_passes(g, &err) != 0)
    FUZZ_CHECK(fuzz_names_file(err.msg, "fuzz.onnx"), "message after passes '%s'", err.msg);
  else
    check_text_round_trip(g);
  ir_graph_free(g);
  return 0;
}
