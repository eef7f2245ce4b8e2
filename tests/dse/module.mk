# tests/dse/module.mk - configuration files and design-space exploration
# (docs/configs.md, docs/dse.md).
#
#   make test            config files through every tool; loom dse on the
#                        digits networks (with a stand-in Yosys, and the
#                        Slurm path with a stand-in sbatch); --validate on
#                        tsim; tsim building a configuration file's model
#   make test-dse-slurm  a one-node Slurm cluster started as root (munged,
#                        slurmctld, slurmd), the same sweep through it, the
#                        results compared with the local run's; about 30 s

# build/models is tests/models/module.mk's MODELS_DIR, included after this file
DSE_TEST_DEPS := $(LOOM) build/models/digits_manifest.json $(BUILD)/tsim/tiny/libloom_tsim.so
SCRIPT_TESTS += tests/dse/test_config_files.sh tests/dse/test_dse.sh tests/dse/test_tsim_cache.sh
TEST_DEPS += $(DSE_TEST_DEPS)

.PHONY: test-dse-slurm
test-dse-slurm: $(LOOM) build/models/digits_manifest.json
	@LOOM=$(LOOM) BUILD=$(BUILD) tests/dse/test_dse_slurm.sh
