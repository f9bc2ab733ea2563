#!/bin/sh
# fsim: actions for identical files. fsim never runs this script: review it.
#   sh report.sh            say what would be done (the same as --dry-run)
#   sh report.sh --link     replace each extra copy by a hard link to the kept file
#   sh report.sh --remove   remove each extra copy
# Run it from the folder fsim ran in (paths are as fsim recorded them).
# Before acting on a copy, both files are checked: each a regular file (not
# a link), its folder still the physical folder recorded (no folder on the
# way swapped for a link or moved), size on disk and modification time as
# recorded, equal bytes (cmp), and the two not one file. Anything else is
# refused and left as it is. A run after a run does nothing more: copies
# already linked or removed are counted apart. Exit 0 when nothing was
# refused.
set -u
unset CDPATH
mode=dry
case "${1:---dry-run}" in
  --dry-run) ;;
  --link) mode='link' ;;
  --remove) mode=remove ;;
  *) echo "usage: sh $0 [--dry-run|--link|--remove]" >&2; exit 2 ;;
esac
acted=0; already=0; refused=0
say() { printf '%s\n' "$*"; }
warn() { printf '%s\n' "$*" >&2; }
phys() { # folder: print its physical path now (fails when it is none)
  case $1 in /*) r=$1 ;; *) r=./$1 ;; esac
  r=$(cd -P -- "$r" 2>/dev/null && pwd -P && echo .) || return 1
  printf '%s' "${r%??}"
}
here() { # path dir: the path's folder is still physical folder dir; f: dir/name
  case $1 in */*) p=${1%/*}; [ -n "$p" ] || p=/ ;; *) p=. ;; esac
  [ "$(phys "$p" && echo .)" = "$2." ] || return 1
  case $2 in /) f=/${1##*/} ;; *) f=$2/${1##*/} ;; esac
}
same() { # file size mtime: a regular file (not a link) as recorded
  [ -f "$1" ] && [ ! -L "$1" ] && [ "$(stat -c '%s %Y' -- "$1")" = "$2 $3" ]
}
one() { # a b: one file (device and inode; test's -ef is not POSIX sh):
  # 0 one, 1 two, 2 cannot tell (a name gone: the caller refuses)
  oa=$(stat -L -c '%d %i' -- "$1" 2>/dev/null) || return 2
  ob=$(stat -L -c '%d %i' -- "$2" 2>/dev/null) || return 2
  [ "$oa" = "$ob" ]
}
gone() { # path: nothing by that name
  [ ! -e "$1" ] && [ ! -L "$1" ]
}
link() { # kept copy: the copy replaced by a hard link to the kept file
  [ ! -e "$2.fsim-link" ] && [ ! -L "$2.fsim-link" ] || return 1
  ln -- "$1" "$2.fsim-link" || return 1
  mv -f -- "$2.fsim-link" "$2" && return 0
  rm -f -- "$2.fsim-link"; return 1
}
kept() { # path dir size mtime: the kept file is as recorded; k: its path
  here "$1" "$2" && same "$f" "$3" "$4" && k=$f
}
refuse() { # n why path
  warn "refused ($2): $3"; refused=$((refused + $1))
}
dup() { # kept kdir size kmtime copy cdir cmtime
  if ! kept "$1" "$2" "$3" "$4"; then refuse 1 "changed since the run" "$1"; return; fi
  if gone "$5"; then say "already removed: $5"; already=$((already + 1)); return; fi
  if ! here "$5" "$6"; then refuse 1 "its folder moved or is a link now" "$5"; return; fi
  one "$k" "$f"; o=$?
  if [ $o -eq 2 ]; then refuse 1 "cannot tell whether the two are one file" "$5"; return; fi
  if [ $o -eq 0 ]; then
    if [ $mode = remove ]; then refuse 1 "the kept file and the copy are one file" "$5"; return; fi
    say "already linked: $5"; already=$((already + 1)); return
  fi
  if ! same "$f" "$3" "$7" || ! cmp -s -- "$k" "$f"; then
    refuse 1 "changed since the run" "$5"; return
  fi
  case $mode in
    dry) say "would replace by a link or remove: $5 (a copy of $1)"; acted=$((acted + 1)) ;;
    link) if link "$k" "$f"; then acted=$((acted + 1)); else refuse 1 "link failed" "$5"; fi ;;
    remove) if rm -f -- "$f"; then acted=$((acted + 1)); else refuse 1 "remove failed" "$5"; fi ;;
  esac
}
tfile() { # step kept kdir size kmtime copy cdir cmtime: a file of a copied tree
  # step: kept (the kept file only), check (both), link or remove (check,
  # then link or remove the copy)
  if ! kept "$2" "$3" "$4" "$5"; then warn "refused (changed since the run): $2"; tok=1; return; fi
  [ "$1" = kept ] && return 0
  if gone "$6"; then tgone=$((tgone + 1)); return; fi
  if ! here "$6" "$7"; then warn "refused (its folder moved or is a link now): $6"; tok=1; return; fi
  one "$k" "$f"; o=$?
  if [ $o -eq 2 ]; then warn "refused (cannot tell whether the two are one file): $6"; tok=1; return; fi
  if [ $o -eq 0 ]; then
    if [ $mode = remove ]; then warn "refused (the kept file and the copy are one file): $6"; tok=1
    else tsame=$((tsame + 1)); fi
    return
  fi
  if ! same "$f" "$4" "$8" || ! cmp -s -- "$k" "$f"; then
    warn "refused (changed since the run): $6"; tok=1; return
  fi
  case $1 in
    link) link "$k" "$f" || { warn "refused (link failed): $6"; tok=1; } ;;
    remove) if rm -f -- "$f"; then tdone=$((tdone + 1)); else warn "refused (remove failed): $6"; tok=1; fi ;;
  esac
}
tpair() { # kept kdir copy cdir: two folders still apart, the copy no link; sets d
  if [ -L "$3" ] || [ -L "$1" ]; then warn "refused (a folder is a link now): $3"; return 1; fi
  kp=$(phys "$1" && echo .); d=$(phys "$3" && echo .)
  if [ "$kp" != "$2." ] || [ "$d" != "$4." ]; then warn "refused (a folder moved or is a link now): $3"; return 1; fi
  d=$4
  one "$1" "$3"; o=$?
  if [ $o -eq 2 ]; then warn "refused (cannot tell whether the two folders are one): $3"; return 1; fi
  if [ $o -eq 0 ]; then warn "refused (the two folders are one): $3"; return 1; fi
  case "$2/" in "$4/"*) warn "refused (one folder holds the other): $3"; return 1 ;; esac
  case "$4/" in "$2/"*) warn "refused (one folder holds the other): $3"; return 1 ;; esac
}
tcount() { # folder: number of entries under it that are not folders
  find "$1" ! -type d -exec printf '%.0sx' {} + | wc -c
}
tree() { # kept kdir copy cdir files function: a copy of a whole tree
  tok=0; tsame=0; tgone=0
  if gone "$3"; then
    "$6" kept
    if [ $tok -eq 0 ]; then say "already removed: $3"; already=$((already + $5)); return; fi
    refuse "$5" "tree changed since the run" "$3"; return
  fi
  if ! tpair "$1" "$2" "$3" "$4"; then refused=$((refused + $5)); return; fi
  "$6" check
  # Every copy gone, the folder kept by files that are not the run's
  # (written in while an earlier --remove ran): done.
  if [ $tok -eq 0 ] && [ $tgone -eq "$5" ]; then say "already removed: $3"; already=$((already + $5)); return; fi
  if [ $tgone -ne 0 ] || [ "$(tcount "$d")" -ne "$5" ]; then
    warn "refused (files added or removed since the run): $3"; tok=1
  fi
  if [ $tok -ne 0 ]; then refuse "$5" "tree changed since the run" "$3"; return; fi
  if [ $tsame -eq "$5" ]; then say "already linked: $3"; already=$((already + $5)); return; fi
  case $mode in
    dry) say "would replace by links or remove the whole tree: $3 (a copy of $1, $5 files)"
         acted=$((acted + $5)) ;;
    link) n=$tsame; tsame=0; "$6" link  # a copy gone since the check counts as done
      if [ $tok -eq 0 ]; then acted=$((acted + $5 - n - tgone)); already=$((already + n + tgone))
      else refuse "$5" "link failed" "$3"; fi ;;
    remove) tdone=0; "$6" remove
      # Its files one by one, each checked again, then the folders left
      # empty: a file put in the copy after it was counted stays, and so
      # does its folder (never rm -r).
      find "$d" -depth -type d -exec rmdir -- {} + 2>/dev/null
      acted=$((acted + tdone)); already=$((already + tgone))
      if [ $tok -ne 0 ]; then refused=$((refused + $5 - tdone - tgone)); fi
      if [ -e "$d" ] || [ -L "$d" ]; then warn "left (not empty once its copies were removed): $3"; fi ;;
  esac
}
