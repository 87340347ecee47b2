#!/bin/bash
# test_ipv6_kernel.sh -- test_ipv6.sh on the kernel data path (`datapath
# kernel`): the kernel's PPTP channel under pppd makes the same pppN
# interfaces, routed and advertised alike.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_ipv6_kernel.sh
E2E_DATAPATH=kernel exec "$(dirname "$0")/test_ipv6.sh" "$@"
