#!/usr/bin/env bash
# Measures what dpproxy costs: the same aggregate through the proxy (DP,
# charged, noisy) and as a raw query straight to MariaDB, at concurrency 1
# and 16, with QPS, p50 and p99 of both and the proxy/direct QPS ratio; then
# the same through the PostgreSQL door with pgbench, proxy and direct; then
# the Go micro-benchmarks of the proxy's own work, the ledger and the noise;
# then the accuracy of private logistic regression (bench/trainbench).
#
# Environment: BENCH_TIME (default 10s per run), TRAIN_RUNS (default 20;
# 0 skips the training benchmark).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

BENCH_TIME=${BENCH_TIME:-10s}

# shellcheck source=lib/mariadb.sh
source scripts/lib/mariadb.sh
install_deps
start_mariadb
start_postgres

phase "building dpproxy and the load generator"
go build -o "$T/dpproxy" ./cmd/dpproxy
go build -o "$T/loadgen" ./bench/loadgen

PROXY_PORT=$(free_port)
PG_PROXY_PORT=$(free_port)
cat >"$T/bench.yaml" <<YAML
listen: {mysql: "127.0.0.1:$PROXY_PORT"}
backend: {driver: mysql, dsn: "$DPPROXY_TEST_MYSQL_DSN", max_open_conns: 64}
ledger: {path: "$T/ledger"}
defaults: {epsilon: 0.001, delta: 1.0e-9, mechanism: laplace}
# Every query is a new, charged DP answer: repeats are not served from the
# cache of released answers (which would answer ~20x faster than the backend).
limits: {answer_cache_ttl: -1s}
roles: {bench: {budget: {epsilon: 1.0e9, delta: 0.1}}}
users: {bench: {password: bench, role: bench}}
tables:
  pums:
    privacy_unit: pid
    max_rows_per_unit: 2
    columns:
      age: {type: int, lower: 0, upper: 100}
YAML
# The same policy in front of PostgreSQL, for the PostgreSQL door.
sed -e "s|mysql: \"127.0.0.1:$PROXY_PORT\"|postgres: \"127.0.0.1:$PG_PROXY_PORT\"|" \
	-e "s|driver: mysql, dsn: \"$DPPROXY_TEST_MYSQL_DSN\"|driver: postgres, dsn: \"$DPPROXY_TEST_PG_DSN\"|" \
	-e "s|path: \"$T/ledger\"|path: \"$T/pgledger\"|" "$T/bench.yaml" >"$T/pgbench.yaml"

phase "starting dpproxy on 127.0.0.1:$PROXY_PORT"
"$T/dpproxy" serve --config "$T/bench.yaml" --log-level warn &
EXTRA_PIDS+=($!)
"$T/dpproxy" serve --config "$T/pgbench.yaml" --log-level warn &
EXTRA_PIDS+=($!)
for port in "$PROXY_PORT" "$PG_PROXY_PORT"; do
	for _ in $(seq 1 100); do
		(echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.1
	done
done

WHERE="age BETWEEN 20 AND 60"
DP_QUERY="SELECT COUNT(*), AVG(age) FROM pums WHERE $WHERE"
RAW_QUERY=$DP_QUERY
PROXY_DSN="bench:bench@tcp(127.0.0.1:$PROXY_PORT)/census"

phase "load: $DP_QUERY (${BENCH_TIME} per run)"
declare -A QPS
for c in 1 16; do
	line=$("$T/loadgen" -dsn "$DPPROXY_TEST_MYSQL_DSN" -query "$RAW_QUERY" -c "$c" -d "$BENCH_TIME" -label "direct MariaDB")
	echo "$line"
	QPS[direct$c]=$(sed -E 's/.*qps=([0-9.]+).*/\1/' <<<"$line")
	line=$("$T/loadgen" -dsn "$PROXY_DSN" -query "$DP_QUERY" -c "$c" -d "$BENCH_TIME" -label "through dpproxy (DP)")
	echo "$line"
	QPS[proxy$c]=$(sed -E 's/.*qps=([0-9.]+).*/\1/' <<<"$line")
done
echo
for c in 1 16; do
	awk -v c="$c" -v p="${QPS[proxy$c]}" -v d="${QPS[direct$c]}" \
		'BEGIN { printf "concurrency %-3d proxy/direct QPS = %.2f\n", c, p / d }'
done

phase "pgbench: $DP_QUERY (${BENCH_TIME} per run)"
echo "$DP_QUERY;" >"$T/query.sql"
PG_DIRECT_PORT=${DPPROXY_TEST_PG_ADDR##*:}
secs=${BENCH_TIME%s}
declare -A PGQPS
for c in 1 16; do
	for target in direct proxy; do
		if [[ $target == direct ]]; then
			port=$PG_DIRECT_PORT user=$DB_USER pw=$DB_PASSWORD db=$DB_NAME
		else
			port=$PG_PROXY_PORT user=bench pw=bench db=public
		fi
		tps=$(PGPASSWORD=$pw pgbench -n -h 127.0.0.1 -p "$port" -U "$user" -f "$T/query.sql" \
			-c "$c" -j "$c" -T "$secs" "$db" 2>&1 | sed -nE 's/^tps = ([0-9.]+).*/\1/p' | head -n 1)
		PGQPS[$target$c]=${tps:-0}
		printf '%-28s c=%-3d qps=%s\n' "pgbench $target" "$c" "${tps:-failed}"
	done
done
for c in 1 16; do
	awk -v c="$c" -v p="${PGQPS[proxy$c]}" -v d="${PGQPS[direct$c]}" \
		'BEGIN { if (d > 0) printf "pgbench concurrency %-3d proxy/direct QPS = %.2f\n", c, p / d }'
done

phase "go test -bench: the proxy's own work per query (parse, plan, noise, post-process)"
go test -run='^$' -bench=ParseRewriteNoise -benchmem ./proxy/ | grep -E '^Benchmark'
phase "go test -bench: ledger charges (Badger, synced writes)"
go test -run='^$' -bench=Charge -benchtime=2s ./ledger/ | grep -E '^Benchmark'
phase "go test -bench: noise"
go test -run='^$' -bench=. ./mechanism/ | grep -E '^Benchmark'

phase "accuracy: median relative error on Adult grouped by sex (bench/accuracy)"
go run ./bench/accuracy -runs "${ACCURACY_RUNS:-101}"

if [[ ${TRAIN_RUNS:-20} -gt 0 ]]; then
	phase "private logistic regression on Adult (bench/trainbench, ${TRAIN_RUNS:-20} runs per cell)"
	go run ./bench/trainbench -runs "${TRAIN_RUNS:-20}" -png "$T/accuracy.png"
fi
