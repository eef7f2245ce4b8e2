#!/bin/sh
# test_zoo_quick.sh - `make test`'s part of the model zoo: the models of
# tests/zoo/zoo.list's quick set (a CNN with SE and HardSwish, the U-Net, the
# LSTM, the BERT-like model and its dynamic-axes export) through
# tests/zoo/run_zoo.sh; `make test-zoo` runs them all.
exec tests/zoo/run_zoo.sh --quick
