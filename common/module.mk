# common/: byte order, rate limiting, timer lists, string cleaning; used by
# the protocols, the engine, the daemon, the client and the plugin alike,
# and depends on none of them.
COMMON_OBJ := $(patsubst %.c,%.o,$(wildcard common/*.c))
common/libcommon.a: $(COMMON_OBJ)
	rm -f $@ && $(AR) rcs $@ $^
CLEAN += common/*.o common/libcommon.a
