#!/bin/bash
# test_rate_kernel.sh -- test_rate.sh on the kernel data path (`datapath
# kernel`): the same pppN interfaces, shaped and policed alike.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_rate_kernel.sh
E2E_DATAPATH=kernel exec "$(dirname "$0")/test_rate.sh" "$@"
