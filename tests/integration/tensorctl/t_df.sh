# tensorctl df: totals and a line per device, --json with the tensor counts; stat is df.
. "$(dirname "$0")/../lib.sh"
ctl_mounts
ctl_two
df_lines() { "$CTL" df "$M" > df.out && grep -q TOTAL df.out && grep -Eq '^device 0 +- +98 +- +2' df.out; }
df_json() {
	"$CTL" df --json "$M" | /usr/bin/python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["tensors"]==2 and d["devices"]==[{"device":0,"tensors":2,"bytes":98}] and d["total"]>=d["used"]>0, d'
}
stat_is_df() { "$CTL" stat "$M/a" | grep -q TOTAL; }
check "df shows totals and a device line" df_lines
check "df --json counts tensors" df_json
check "stat is df" stat_is_df
finish
