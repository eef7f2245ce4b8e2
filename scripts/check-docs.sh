#!/bin/sh
# Checks that the generated tables pasted into docs/ match hw/spec/*.def.
# A table sits between "<!-- loomgen:KIND -->" and "<!-- /loomgen:KIND -->";
# `scripts/check-docs.sh LOOMGEN --fix` rewrites them in place.
set -eu
loomgen=$1
fix=${2:-}
status=0
for doc in docs/*.md; do
  for kind in $(sed -n 's/^<!-- loomgen:\([a-z-]*\) -->$/\1/p' "$doc"); do
    want=$("$loomgen" docs "$kind")
    have=$(sed -n "/^<!-- loomgen:$kind -->\$/,/^<!-- \/loomgen:$kind -->\$/p" "$doc" | sed '1d;$d')
    if [ "$want" != "$have" ]; then
      if [ "$fix" = "--fix" ]; then
        tmp=$(mktemp)
        printf '%s\n' "$want" > "$tmp.table"
        awk -v kind="$kind" -v table="$tmp.table" '
          $0 == "<!-- loomgen:" kind " -->" { print; while ((getline l < table) > 0) print l; skip = 1; next }
          $0 == "<!-- /loomgen:" kind " -->" { skip = 0 }
          !skip { print }' "$doc" > "$tmp" && mv "$tmp" "$doc"
        rm -f "$tmp.table"
        echo "check-docs: rewrote $kind table in $doc"
      else
        echo "check-docs: $doc: table '$kind' differs from hw/spec (run scripts/check-docs.sh $loomgen --fix)" >&2
        status=1
      fi
    fi
  done
done
exit $status
