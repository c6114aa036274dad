# shellcheck shell=bash
# Shared by scripts/test.sh and scripts/bench.sh: install what is missing,
# start a throwaway MariaDB on a free loopback port in a temp dir with the
# sample data loaded, and stop it again on exit. Source it from the repo root
# after `set -euo pipefail`, then call install_deps and start_mariadb.
#
# After start_mariadb:
#   DPPROXY_TEST_MYSQL_DSN     dp:secret@tcp(127.0.0.1:PORT)/census
#   DPPROXY_TEST_MYSQL_ADDR    127.0.0.1:PORT
#   DPPROXY_TEST_MYSQL_SOCKET  the server's Unix socket (root, no password)
#   T                          the temp dir (removed on exit)

DB_USER=dp
DB_PASSWORD=secret
DB_NAME=census

phase() { printf '\n==> %s\n' "$*"; }
die() {
	printf '%s: %s\n' "$(basename "$0")" "$*" >&2
	exit 1
}

T=""
MARIADB_PID=""
EXTRA_PIDS=()
cleanup() {
	local status=$?
	local pid
	for pid in "${EXTRA_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [[ -n $MARIADB_PID ]] && kill -0 "$MARIADB_PID" 2>/dev/null; then
		phase "stopping MariaDB (pid $MARIADB_PID)"
		kill -TERM "$MARIADB_PID" 2>/dev/null || true
		for _ in $(seq 1 60); do
			kill -0 "$MARIADB_PID" 2>/dev/null || break
			sleep 0.5
		done
		if kill -0 "$MARIADB_PID" 2>/dev/null; then
			echo "MariaDB did not stop within 30s; killing it" >&2
			kill -KILL "$MARIADB_PID" 2>/dev/null || true
		fi
		wait "$MARIADB_PID" 2>/dev/null || true
	fi
	if [[ -n $T && -d $T ]]; then
		rm -rf -- "$T"
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# free_port prints a free loopback port: bind port 0 and let the kernel
# choose. The port is free again when Python exits; the race with another
# process taking it is small, and the start-up wait reports it.
free_port() {
	/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

install_deps() {
	phase "checking dependencies"
	command -v go >/dev/null || die "go is not on PATH"

	missing=()
	have_bin() { command -v "$1" >/dev/null || [[ -x /usr/sbin/$1 ]]; }
	have_py() { [[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c "import $1" 2>/dev/null; }
	have_bin mariadbd && have_bin mariadb-install-db || missing+=(mariadb-server)
	have_bin mariadb && have_bin mariadb-admin || missing+=(mariadb-client)
	have_py pymysql || missing+=(python3-pymysql)
	have_py sqlalchemy || missing+=(python3-sqlalchemy)
	have_py psycopg2 || missing+=(python3-psycopg2)
	have_py psycopg || missing+=(python3-psycopg)
	have_py pandas || missing+=(python3-pandas)
	have_py pyodbc || missing+=(python3-pyodbc unixodbc)
	[[ -f /usr/lib/x86_64-linux-gnu/odbc/psqlodbcw.so ]] || missing+=(odbc-postgresql)
	[[ -f /usr/share/java/postgresql.jar ]] || missing+=(libpostgresql-jdbc-java)
	have_bin sysbench || missing+=(sysbench)
	pg_bin initdb >/dev/null || missing+=(postgresql)
	have_bin psql || missing+=(postgresql-client)
	[[ -f /usr/share/java/mariadb-java-client.jar ]] || missing+=(libmariadb-java)
	have_bin javac || missing+=(default-jdk-headless)
	have_bin chromium || missing+=(chromium fonts-liberation)
	have_bin etcd || missing+=(etcd-server)
	if ((${#missing[@]} > 0)); then
		phase "installing ${missing[*]}"
		[[ $(id -u) == 0 ]] || die "installing ${missing[*]} needs root"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -q
		apt-get install -y -q --no-install-recommends "${missing[@]}"
	else
		echo "all present"
	fi
	PATH=$PATH:/usr/sbin

}

start_mariadb() {
	T=$(mktemp -d /tmp/dpproxy-test.XXXXXX)
	SOCKET=$T/mysqld.sock
	ERRLOG=$T/error.log

	PORT=$(free_port)

	phase "initialising MariaDB in $T/data"
	# --no-defaults keeps the host's /etc/mysql configuration out of the way.
	mariadb-install-db --no-defaults --user=root --datadir="$T/data" \
		--auth-root-authentication-method=normal --skip-test-db --skip-name-resolve \
		>"$T/install.log" 2>&1 || {
		tail -n 30 "$T/install.log" >&2
		die "mariadb-install-db failed"
	}

	phase "starting MariaDB on 127.0.0.1:$PORT"
	mariadbd --no-defaults --user=root --datadir="$T/data" --tmpdir="$T" \
		--socket="$SOCKET" --port="$PORT" --bind-address=127.0.0.1 \
		--pid-file="$T/mysqld.pid" --log-error="$ERRLOG" --skip-name-resolve \
		--innodb-buffer-pool-size=128M --max-connections=500 &
	MARIADB_PID=$!

	root_sql() { mariadb --no-defaults --socket="$SOCKET" --user=root "$@"; }

	ready=""
	for _ in $(seq 1 120); do # up to 60 s
		if ! kill -0 "$MARIADB_PID" 2>/dev/null; then
			tail -n 30 "$ERRLOG" >&2 || true
			MARIADB_PID=""
			die "MariaDB exited during startup (error log above)"
		fi
		if root_sql -e 'SELECT 1' >/dev/null 2>&1; then
			ready=1
			break
		fi
		sleep 0.5
	done
	if [[ -z $ready ]]; then
		tail -n 30 "$ERRLOG" >&2 || true
		die "MariaDB did not answer on $SOCKET within 60s (error log above)"
	fi

	phase "creating database $DB_NAME and user $DB_USER@127.0.0.1"
	# dp reads; CREATE, INSERT and DROP let the tests load the sample data (Load
	# drops a table it could not fill) and make scratch tables.
	root_sql <<-SQL
	CREATE DATABASE \`$DB_NAME\`;
	CREATE USER '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASSWORD';
	GRANT SELECT, CREATE, INSERT, DROP ON \`$DB_NAME\`.* TO '$DB_USER'@'127.0.0.1';
	SQL

	export DPPROXY_TEST_MYSQL_DSN="$DB_USER:$DB_PASSWORD@tcp(127.0.0.1:$PORT)/$DB_NAME"
	export DPPROXY_TEST_MYSQL_ADDR="127.0.0.1:$PORT"
	export DPPROXY_TEST_MYSQL_SOCKET="$SOCKET"

	phase "loading the sample data into $DB_NAME"
	go run ./cmd/dpproxy load-sample --driver mysql --dsn "$DPPROXY_TEST_MYSQL_DSN"

}

POSTGRES_PID=""

# pg_bin finds a PostgreSQL server program (Debian keeps them out of PATH).
pg_bin() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		[[ -x $d/$1 ]] && { echo "$d/$1"; return; }
	done
	return 1
}

# start_postgres starts a throwaway PostgreSQL in $T/pg (as the postgres
# user: initdb and postgres refuse to run as root), creates role dp and
# database census, loads the sample data, and exports
# DPPROXY_TEST_PG_DSN and DPPROXY_TEST_PG_ADDR. Call after start_mariadb
# (which made $T).
start_postgres() {
	local initdb postgres port pgdir
	initdb=$(pg_bin initdb) || die "PostgreSQL's initdb is not installed"
	postgres=$(pg_bin postgres) || die "PostgreSQL's postgres is not installed"
	port=$(free_port)
	pgdir=$T/pg
	mkdir -p "$pgdir"
	chown postgres: "$pgdir"
	chmod 755 "$T"
	phase "initialising PostgreSQL in $pgdir/data"
	runuser -u postgres -- "$initdb" -D "$pgdir/data" -U postgres --auth=trust -E UTF8 \
		>"$pgdir/initdb.log" 2>&1 || {
		tail -n 30 "$pgdir/initdb.log" >&2
		die "initdb failed"
	}
	phase "starting PostgreSQL on 127.0.0.1:$port"
	runuser -u postgres -- "$postgres" -D "$pgdir/data" -p "$port" -h 127.0.0.1 \
		-k "$pgdir" -c fsync=off -c max_connections=200 >"$pgdir/server.log" 2>&1 &
	POSTGRES_PID=$!
	EXTRA_PIDS+=("$POSTGRES_PID")
	local ready=""
	for _ in $(seq 1 120); do
		if ! kill -0 "$POSTGRES_PID" 2>/dev/null; then
			tail -n 30 "$pgdir/server.log" >&2 || true
			die "PostgreSQL exited during startup (log above)"
		fi
		if psql -h "$pgdir" -p "$port" -U postgres -d postgres -Atc 'SELECT 1' >/dev/null 2>&1; then
			ready=1
			break
		fi
		sleep 0.5
	done
	[[ -n $ready ]] || die "PostgreSQL did not answer within 60s"
	psql -q -h "$pgdir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 <<-SQL
		CREATE ROLE $DB_USER LOGIN PASSWORD '$DB_PASSWORD';
		CREATE DATABASE $DB_NAME OWNER $DB_USER;
	SQL
	export DPPROXY_TEST_PG_DSN="postgres://$DB_USER:$DB_PASSWORD@127.0.0.1:$port/$DB_NAME?sslmode=disable"
	export DPPROXY_TEST_PG_ADDR="127.0.0.1:$port"
	phase "loading the sample data into PostgreSQL $DB_NAME"
	go run ./cmd/dpproxy load-sample --driver postgres --dsn "$DPPROXY_TEST_PG_DSN"
}
