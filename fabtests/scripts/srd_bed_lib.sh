# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# srd_bed_lib.sh: what the network-namespace test beds (srd_ecmp_bed.sh,
# srd_veth_bed.sh) and the scripts that run Open MPI across namespaces
# (mpi_suite.sh --hosts, srd_hosts_recipe.sh) share; sourced, not run.
# The caller sets prog (its name, for messages).

# die MESSAGE: says it, prefixed with the bed's name, and exits 1
die() {
	echo "${prog:-bed}: $*" >&2
	exit 1
}

# bed_exists NS: the namespace exists
bed_exists() {
	ip netns list 2>/dev/null | awk '{print $1}' | grep -qx -- "$1"
}

# bed_sysctls NS KEY=VALUE...
bed_sysctls() {
	local ns=$1 kv
	shift
	for kv in "$@"; do
		ip netns exec "$ns" sysctl -qw "$kv" >/dev/null ||
			die "sysctl $kv in $ns failed"
	done
}

# bed_wait_running NS: until every veth of NS reports operstate up (its
# peer end is up and carrier is on), 5 s at most.  In its first moments
# a veth that is up is not yet running, and fi_getinfo skips it (srd and
# net say so at FI_LOG_LEVEL=debug), so a test that starts at once may
# fall back to another address.
bed_wait_running() {
	local dev state
	for _ in $(seq 1 100); do
		state=up
		for dev in $(ip -n "$1" -o link show type veth |
			     sed -n 's/^[0-9]*: \([^@:]*\)[@:].*/\1/p'); do
			[ "$(ip netns exec "$1" cat "/sys/class/net/$dev/operstate" \
			     2>/dev/null)" = up ] || state=down
		done
		[ "$state" = up ] && return 0
		sleep 0.05
	done
	return 1
}

# bed_del_namespaces NS...: kills what runs in them, waits for it (3 s
# at most, so that nothing outlives the bed) and deletes them; returns
# non-zero if one is left
bed_del_namespaces() {
	local ns pids left
	for ns in "$@"; do
		pids=$(ip netns pids "$ns" 2>/dev/null)
		# shellcheck disable=SC2086 # a list of pids
		[ -n "$pids" ] && kill -KILL $pids 2>/dev/null
	done
	for _ in $(seq 1 30); do
		left=
		for ns in "$@"; do
			left+=$(ip netns pids "$ns" 2>/dev/null)
		done
		[ -z "$left" ] && break
		sleep 0.1
	done
	left=0
	for ns in "$@"; do
		bed_exists "$ns" || continue
		ip netns del "$ns" 2>/dev/null || {
			echo "${prog:-bed}: could not delete namespace $ns" >&2
			left=1
		}
	done
	return $left
}

# bed_mpi_launcher DIR PATTERN: writes DIR/nsexec and DIR/agent, the way
# mpirun starts ranks in namespaces instead of over ssh.
#   nsexec NS CMD...  runs CMD in namespace NS with hostname NS (its own
#                     UTS namespace), so that Open MPI sees one node per
#                     namespace (session directories and shared-memory
#                     names contain the host name);
#   agent [-opts] HOST CMD...  mpirun's rsh agent (--mca plm_rsh_agent):
#                     nsexec HOST, for a HOST that matches the case
#                     PATTERN (e.g. "srdh[0-9]*" or "a|b"), else exit 255.
bed_mpi_launcher() {
	local dir=$1 pattern=$2
	cat >"$dir/nsexec" <<'EOF'
#!/bin/bash
ns=$1; shift
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$ns" "$@"
EOF
	cat >"$dir/agent" <<EOF
#!/bin/bash
while [ \$# -gt 0 ] && [ "\${1#-}" != "\$1" ]; do shift; done
host=\$1; shift
case "\$host" in
$pattern) ;;
*) echo "agent: unknown host \$host" >&2; exit 255 ;;
esac
exec "$dir/nsexec" "\$host" bash -c "\$*"
EOF
	chmod +x "$dir/nsexec" "$dir/agent"
}
