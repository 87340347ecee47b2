/* bench_gre -F: the data path between a real pty and raw GRE, ours and
 * Poptop's side by side (bench_floor.c). */
#ifndef BENCH_FLOOR_H
#define BENCH_FLOOR_H

int floor_main(int argc, char **argv);
/* The stand-in pppd, when this binary is re-executed as one. */
int floor_pppd_main(const char *shm_path);

#endif
