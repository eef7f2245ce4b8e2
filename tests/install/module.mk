# tests/install/module.mk - Loom as installed: `make install` into a
# temporary PREFIX, a C program built with pkg-config against it, and the
# Python package running the digits CNN bit-identically to `loom run`
# (tests/install/test_install.sh).  Not under SAN=1: the Python interpreter
# cannot load a sanitized libloom.so.

ifneq ($(SAN),1)
SCRIPT_TESTS += tests/install/test_install.sh
TEST_DEPS += $(LOOM) $(LIBLOOM_SO) $(LOOM_MAN) $(BUILD)/tsim/default/libloom_tsim.so \
  build/models/digits_manifest.json
endif
