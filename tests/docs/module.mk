# tests/docs/module.mk - the documentation's commands, run (make test).
#
# tests/docs/test_doc_commands.sh runs every command of README.md, docs/*.md
# and the examples of `loom COMMAND --help` on the models the tests make
# (tsim included), dry-runs the make targets they name, and lists with a
# reason the few that need a board, Vivado or a long run.

TEST_DEPS += $(LOOM) $(GEMM_REF) $(MODELS_DIR)/digits_manifest.json $(BUILD)/tsim/default/libloom_tsim.so \
  $(BUILD)/tsim/tiny/libloom_tsim.so
SCRIPT_TESTS += tests/docs/test_doc_commands.sh
