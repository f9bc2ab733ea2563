# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stage 7 on a shared POSIX work folder, a task per report format: the
# formats on stdin; the pairs read from their parts ($SRC/part-*, in name
# order: the whole file), the report written to $OUT/report.<format>
# (atomically, by fsim-report); the format printed when done.
fail_once report /dev/null
while read -r fmt; do
  case $fmt in txt) name=text ;; *) name=$fmt ;; esac
  if [ "$fmt" = html ] && [ -n "$HTML_MAX_VIEWS" ]; then more="--html-max-views $HTML_MAX_VIEWS"; else more=; fi
  cat "$SRC"/part-* | "$B/fsim-report" "$@" --format "$name" $more --files "$FT" --tmpdir "$t" -o "$OUT/report.$fmt" -
  echo "$fmt"
done
