# shellcheck shell=bash disable=SC2154,SC2034  # variables shared with the task runner and the sourced analyze-lib.sh
# Stage 7 (a non-shared work folder), one task: the pairs on stdin, every
# format in $FORMATS written in turn, each printed as
# `<format><TAB><line number><TAB><base64 line>`.
cat > "$t/in.tsv"
fail_once report /dev/null
for fmt in $FORMATS; do
  case $fmt in txt) name=text ;; *) name=$fmt ;; esac
  if [ "$fmt" = html ] && [ -n "$HTML_MAX_VIEWS" ]; then more="--html-max-views $HTML_MAX_VIEWS"; else more=; fi
  "$B/fsim-report" "$@" --format "$name" $more --files "$FT" --tmpdir "$t" -o "$t/report" "$t/in.tsv"
  base64 -w 65536 "$t/report" | awk -v f="$fmt" '{ printf "%s\t%012d\t%s\n", f, NR, $0 }'
done
