#!/bin/bash
# test_radius_kernel.sh -- test_radius.sh on the kernel data path (`datapath
# kernel`): MPPE keys and policy from FreeRADIUS, accounting (radius.so's
# and pptpd's Interim-Update with the IPv6 /64), Framed-IP-Address and
# Framed-IPv6-Prefix, Port-Limit, over the kernel's PPTP channel.
#
#   scripts/e2e-run tests/e2e/run-all tests/e2e/test_radius_kernel.sh
E2E_DATAPATH=kernel exec "$(dirname "$0")/test_radius.sh" "$@"
