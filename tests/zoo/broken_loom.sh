#!/bin/sh
# broken_loom.sh - a deliberately broken `loom` for testing the zoo harness
# (tests/zoo/test_zoo_quick.sh): it runs the real one ($REAL_LOOM), except
# that `loom run -i DIR/NNN.npy` reads another input of DIR instead:
#   BROKEN=constant   always DIR/000.npy (the same output for every input)
#   BROKEN=shuffled   the next input, DIR/(NNN+1 mod count).npy (outputs of the
#                     wrong inputs)
# A harness that passes a model run by this is not testing anything.
set -u
REAL_LOOM=${REAL_LOOM:-build/bin/loom}
[ "${1:-}" = run ] || exec "$REAL_LOOM" "$@"
out="" prev=""
for a in "$@"; do
  if [ "$prev" = -i ]; then
    d=$(dirname "$a") n=$(basename "$a" .npy)
    count=$(ls "$d"/[0-9][0-9][0-9].npy | wc -l)
    case ${BROKEN:-constant} in
      constant) a=$d/000.npy ;;
      *) a=$(printf '%s/%03d.npy' "$d" $(( ($(expr "$n" + 0) + 1) % count ))) ;;
    esac
  fi
  prev=$a
  out="$out '$a'"
done
eval "exec \"\$REAL_LOOM\" $out"
