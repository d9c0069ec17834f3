#!/usr/bin/env bash
# CPU per request of the benchmark application on Redis, per endpoint: the application's CPU time (user and all,
# from /proc/<pid>/stat), its threads' voluntary context switches, and Redis's CPU (INFO cpu), each over one wrk
# phase, divided by the requests served. Two rounds; read the second (the first warms the JIT).
#
# Usage (from the repository root, after ./mvnw -q -B -pl benchmarks/http -am package -DskipTests):
#   benchmarks/http/cpu-per-request.sh CONNECTIONS ENDPOINT...      e.g.  ... 2 hand annotated url
# Needs wrk, redis-server and redis-cli on the PATH. Starts its own redis-server and application on free ports, and
# stops only those.
set -euo pipefail
connections=$1; shift
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
redis_port=$(free_port); app_port=$(free_port)
redis-server --port "$redis_port" --save '' --appendonly no --daemonize no > /dev/null &
redis=$!
java -jar benchmarks/http/target/http-benchmark.jar app --server.port="$app_port" \
  --ratelimit.redis.url="redis://127.0.0.1:$redis_port" > /dev/null 2>&1 &
app=$!
trap 'kill $app $redis 2>/dev/null; wait $app $redis 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do curl -s -o /dev/null "http://127.0.0.1:$app_port/bare" && break; sleep 1; done
cpu() { awk '{print $14 + $15}' "/proc/$app/stat"; }
user() { awk '{print $14}' "/proc/$app/stat"; }
switches() { cat /proc/"$app"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/ {s += $2} END {print s}'; }
redis_cpu() { redis-cli -p "$redis_port" info cpu | awk -F: '/used_cpu_sys:|used_cpu_user:/ {s += $2} END {printf "%.6f", s}'; }
ticks=$(getconf CLK_TCK)
for round in 1 2; do
  for endpoint in "$@"; do
    wrk -t2 -c"$connections" -d4s "http://127.0.0.1:$app_port/$endpoint" > /dev/null
    a0=$(cpu); u0=$(user); x0=$(switches); r0=$(redis_cpu)
    out=$(wrk -t2 -c"$connections" -d8s "http://127.0.0.1:$app_port/$endpoint")
    a1=$(cpu); u1=$(user); x1=$(switches); r1=$(redis_cpu)
    n=$(echo "$out" | awk '/requests in/ {print $1}')
    rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
    python3 -c "print('round $round /$endpoint, $connections connections: $rps requests/s; application %.1f us/request (user %.1f), %.2f context switches/request; Redis %.1f us/request' % (($a1 - $a0) * 1e6 / $ticks / $n, ($u1 - $u0) * 1e6 / $ticks / $n, ($x1 - $x0) / $n, ($r1 - $r0) * 1e6 / $n))"
  done
done
