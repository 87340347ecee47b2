#!/bin/bash
# test_mss_kernel.sh -- test_mss.sh on the kernel data path (`datapath
# kernel`): the kernel's PPTP channel under pppd makes the same pppN
# interfaces, clamped alike.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_mss_kernel.sh
E2E_DATAPATH=kernel exec "$(dirname "$0")/test_mss.sh" "$@"
