# CPU accounting for the load benchmarks (sourced by bench/run and bench/arena/run).
#
# A cell's requests/s says which server was faster only when the server was the bottleneck.
# On this project's 2-core machine the server has CPU 0 and the load generator CPU 1, so a
# measured run also records the server's own CPU time and how busy each core was: a server
# that used all of CPU 0 was measured; one that left CPU 0 idle while CPU 1 was full was
# waiting for the load generator, and its requests/s are the client's.

# CPU time of the server (nginx: master and worker), in clock ticks: utime + stime of
# /proc/PID/stat, read after the command name, which may hold spaces. Uses SERVER_PID.
server_ticks() {
  local p total=0
  for p in "$SERVER_PID" $(ps -o pid= --ppid "$SERVER_PID" 2>/dev/null); do
    total=$((total + $(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}' || echo 0)))
  done
  echo "$total"
}

# "busy total" ticks of cpu0 and cpu1 from /proc/stat.
cpu_ticks() { awk '/^cpu[01] / {printf "%s %d %d ", $1, $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }

# with_cpu COMMAND... -> COMMAND's RESULT line followed by server_cpu_s (the server's CPU
# time while it ran), cpu0_busy and cpu1_busy (each core's busy share, 0-1) and server_share
# (server_cpu_s over the wall time: the share of CPU 0 the server used; for a load generator
# with its own warm-up, such as h2load's, the share holds for the measured part too).
with_cpu() {
  local t0 c0 w0 line t1 c1 w1
  t0=$(server_ticks); c0=$(cpu_ticks); w0=$(date +%s.%N)
  line=$("$@")
  t1=$(server_ticks); c1=$(cpu_ticks); w1=$(date +%s.%N)
  echo "$line $(awk -v a="$c0" -v b="$c1" -v t="$((t1 - t0))" -v hz="$(getconf CLK_TCK)" -v w0="$w0" -v w1="$w1" 'BEGIN {
      split(a, x, " "); split(b, y, " "); wall = w1 - w0
      printf "server_cpu_s=%.2f server_share=%.3f cpu0_busy=%.2f cpu1_busy=%.2f", t / hz, (wall > 0 ? t / hz / wall : 0),
        (y[3] - x[3] > 0 ? (y[2] - x[2]) / (y[3] - x[3]) : 0), (y[6] - x[6] > 0 ? (y[5] - x[5]) / (y[6] - x[6]) : 0) }')"
}
