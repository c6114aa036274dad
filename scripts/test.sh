#!/usr/bin/env bash
# Runs dpproxy's checks against a real MariaDB: installs what is missing
# (Debian bookworm, as root), starts a throwaway MariaDB in a temp dir, loads the
# sample data, then runs go vet, the tests with the race detector, and a short
# run of every fuzz target. Stops everything it started on exit.
#
# Environment:
#   GO_TEST_PKGS   packages to vet, test and fuzz (default ./...), space-separated
#   FUZZTIME       how long each fuzz target runs (default 10s)
#   TEST_TIMEOUT   go test -timeout (default 40m)
#
# The tests see:
#   DPPROXY_TEST_MYSQL_DSN     dp:secret@tcp(127.0.0.1:PORT)/census
#   DPPROXY_TEST_MYSQL_ADDR    127.0.0.1:PORT
#   DPPROXY_TEST_MYSQL_SOCKET  the server's Unix socket (root, no password)
# Python tests must run /usr/bin/python3: the python3 first on PATH may be
# another interpreter that does not see Debian's python3-pymysql.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

read -r -a PKGS <<<"${GO_TEST_PKGS:-./...}"
FUZZTIME=${FUZZTIME:-10s}
TEST_TIMEOUT=${TEST_TIMEOUT:-40m}

# shellcheck source=lib/mariadb.sh
source scripts/lib/mariadb.sh
install_deps
start_mariadb
start_postgres

# --- Go checks ---------------------------------------------------------------

failed=()

phase "go vet ${PKGS[*]}"
go vet "${PKGS[@]}" || failed+=("go vet")

phase "go test -race ${PKGS[*]}"
go test -race -count=1 -timeout="$TEST_TIMEOUT" "${PKGS[@]}" || failed+=("go test")

phase "finding fuzz targets"
# go test -list prints the matching names of a package, then its "ok" line.
fuzz=()
if listing=$(go test -run='^$' -list='^Fuzz' "${PKGS[@]}"); then
	names=()
	while read -r first second _; do
		case $first in
		Fuzz*) names+=("$first") ;;
		ok)
			for name in "${names[@]}"; do
				fuzz+=("$second $name")
			done
			names=()
			;;
		esac
	done <<<"$listing"
else
	failed+=("listing fuzz targets")
fi
echo "${#fuzz[@]} fuzz target(s)"

for target in "${fuzz[@]}"; do
	read -r pkg name <<<"$target"
	phase "fuzzing $name in $pkg for $FUZZTIME"
	go test -run='^$' -fuzz="^$name\$" -fuzztime="$FUZZTIME" "$pkg" || failed+=("fuzz $name")
done

if ((${#failed[@]} > 0)); then
	phase "FAILED: ${failed[*]}"
	exit 1
fi
phase "all checks passed"
