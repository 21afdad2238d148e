#!/bin/sh
# An outside seat in jq: the rule of examples/ext_client.py (the lowest legal id, no pass while another move
# is legal), one reply line a message, until the input ends. Seat it with
#     python evaluate.py --a "ext:sh examples/ext_client.sh" --b rule --deals 10
exec jq --unbuffered -c '[.legal[].id] | sort | {move: (if .[0] == 0 and length > 1 then .[1] else .[0] end)}'
