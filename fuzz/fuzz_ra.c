/* Fuzz the Router Solicitation check and the Router Advertisement reader
 * (proto/ra.c): a client sends pptpd Solicitations on its ppp link, and
 * the advertisement reader is the tests' view of what pptpd sends. Besides
 * memory safety (exact-size heap copies, so any over-read is caught):
 *  - a message that passes either check still passes with its options
 *    walked to the end, and fails cut short inside an option;
 *  - an advertisement read back with a /64 and a sendable MTU builds
 *    again to one that reads back the same. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_util.h"
#include "proto/ra.h"

static void
check_roundtrip(const struct ra_info *ri)
{
	uint8_t buf[RA_LEN];
	struct ra_info back;
	unsigned life;
	uint32_t valid, preferred;

	if (ri->prefix_len != 64 || (ri->mtu != 0 && ri->mtu < RA_MTU_MIN))
		return;
	int n = ra_build(ri, buf, sizeof(buf));
	if (n < 0)
		abort();   /* sendable facts refused */
	if (ra_parse(buf, (size_t)n, &back, &life, &valid, &preferred) != 0 ||
	    memcmp(&back.prefix, &ri->prefix, sizeof(back.prefix)) != 0 ||
	    back.mtu != ri->mtu || back.withdraw != ri->withdraw)
		abort();   /* what we send does not read back */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *msg = fz_dup(data, size);
	struct ra_info ri;
	unsigned life;
	uint32_t valid, preferred;

	if (ra_rs_valid(msg, size) == 0 && size > 8 &&
	    ra_rs_valid(msg, size - 1) == 0 && (size - 8) % 8 == 0)
		abort();   /* an option cut short went unnoticed */
	if (ra_parse(msg, size, &ri, &life, &valid, &preferred) == 0)
		check_roundtrip(&ri);
	free(msg);
	return 0;
}
