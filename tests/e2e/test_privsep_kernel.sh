#!/bin/bash
# test_privsep_kernel.sh -- test_privsep.sh on the kernel data path
# (`datapath kernel`): the monitor starts pppd with the channel the worker
# opened.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_privsep_kernel.sh
E2E_DATAPATH=kernel exec "$(dirname "$0")/test_privsep.sh" "$@"
