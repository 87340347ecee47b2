#include "common/ratelimit.h"

void
ratelimit_init(struct ratelimit *rl, uint32_t burst, uint32_t period_ms)
{
	*rl = (struct ratelimit)RATELIMIT_INIT(burst, period_ms);
}

int
ratelimit_allow(struct ratelimit *rl, uint64_t now_ms, uint32_t *suppressed)
{
	*suppressed = 0;
	if (now_ms - rl->since >= rl->period_ms) {
		*suppressed = rl->suppressed;
		rl->since = now_ms;
		rl->lines = 0;
		rl->suppressed = 0;
	}
	if (rl->lines < rl->burst) {
		rl->lines++;
		return 1;
	}
	rl->suppressed++;
	return 0;
}
