# sw_compiler/module.mk - extra build rules of the compiler.
#
# The ONNX protobuf bindings are generated at build time by protoc-c from
# the onnx.proto that Debian's python3-onnx installs (package `onnx`, proto2,
# no imports: protoc-c takes it as it is).  Nothing generated is committed:
# the C sources land in $(GEN)/onnx/ and are compiled into libloomc.a.
# Override ONNX_PROTO to use another copy of the schema.

ONNX_PROTO ?= /usr/lib/python3/dist-packages/onnx/onnx.proto
ONNX_GEN_DIR := $(GEN)/onnx
ONNX_PB_H := $(ONNX_GEN_DIR)/onnx.pb-c.h
ONNX_PB_C := $(ONNX_GEN_DIR)/onnx.pb-c.c
ONNX_PB_O := $(BUILD)/obj/gen/onnx/onnx.pb-c.o

LIBLOOMC_EXTRA_OBJS += $(ONNX_PB_O)
LOOM_EXTRA_LIBS += -lprotobuf-c

$(ONNX_PB_H) $(ONNX_PB_C) &: $(ONNX_PROTO)
	@mkdir -p $(ONNX_GEN_DIR)
	protoc-c --proto_path=$(dir $(ONNX_PROTO)) --c_out=$(ONNX_GEN_DIR) $(ONNX_PROTO)

# Users of the generated header must wait for it.
$(BUILD)/obj/sw_compiler/onnx_import.o $(BUILD)/obj/sw_compiler/onnx_import_node.o $(BUILD)/obj/sw_compiler/onnx_import_norm.o: $(ONNX_PB_H)
$(BUILD)/tests/test_onnx_import $(BUILD)/obj/tests/support/onnxbuild.o: $(ONNX_PB_H)
