#!/bin/bash
# test_first_light_kernel.sh -- test_first_light.sh on the kernel data path
# (`datapath kernel`: the kernel's PPTP channel under pppd, no pty, no
# engine in between).
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_first_light_kernel.sh
E2E_DATAPATH=kernel exec "$(dirname "$0")/test_first_light.sh" "$@"
