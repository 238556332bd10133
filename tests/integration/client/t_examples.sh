# The examples run as a user would run them: open_by_path, queue_lifecycle (leaving
# nothing behind), tensors.sh and dlpack_torch.py.
. "$(dirname "$0")/../lib.sh"
client_mount
left_nothing() { [ ! -e "$M/exq" ] && [ "$(rcli exists tensorfs:tensor:exq)" = 0 ]; }
printf '\x01\x02\x03' > "$M/ex"
check "examples/open_by_path" "$EX/open_by_path" "$M/ex"
eq "open_by_path added 1 to each byte" "020304" "$(od -An -tx1 "$M/ex" | tr -d ' ')"
check "examples/queue_lifecycle" "$EX/queue_lifecycle" "$URL" exq
check "queue_lifecycle left nothing" left_nothing
check "examples/tensors.sh" bash "$ROOT/examples/tensors.sh" "$M"
touch "$M/py"; setfattr -n user.tensor.shape -v '[8]' "$M/py"
run_py "$M/py"
finish
