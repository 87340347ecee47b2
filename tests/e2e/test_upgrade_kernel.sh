#!/bin/bash
# test_upgrade_kernel.sh -- test_upgrade.sh on the kernel data path
# (`datapath kernel`): the new monitor puts each call back in its GRE
# guard.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_upgrade_kernel.sh
E2E_DATAPATH=kernel exec "$(dirname "$0")/test_upgrade.sh" "$@"
