# tensorctl df: totals and a line per device with its memory as the daemon reports it,
# --json with the tensor counts; stat is df.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
ctl_two
df_lines() { "$CTL" df "$M" > df.out && grep -q TOTAL df.out && grep -Eq '^device 0 +[0-9.]+ [KMGT]iB +[0-9]+ +[0-9.]+ [KMGT]iB +2 +\(98 B of tensors\)' df.out; }
# the tensors are on device 0; a machine with more GPUs lists the others empty, and the
# totals are the sums over the devices
df_json() {
	"$CTL" df --json "$M" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); v=d["devices"]; assert d["tensors"]==2 and len(v)>=1 and {k:v[0][k] for k in ("device","tensors","bytes")}=={"device":0,"tensors":2,"bytes":98} and all(x["tensors"]==0 for x in v[1:]) and d["total"]>=d["used"]>0 and tuple(sum(x[k] for x in v) for k in ("total","used","free"))==(d["total"],d["used"],d["free"]), d'
}
stat_is_df() { "$CTL" stat "$M/a" | grep -q TOTAL; }
check "df shows totals and a device line" df_lines
check "df --json counts tensors" df_json
check "stat is df" stat_is_df
finish
