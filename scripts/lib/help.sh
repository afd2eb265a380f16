# Sourced first by the scripts that take arguments: with -h or --help among them, prints the comment at the top of
# the script (its usage), from its second line to its first line of code, and exits 0, before anything is installed
# or built.
# usage: source scripts/lib/help.sh "$0" "$@"
for _arg in "${@:2}"; do
  if [ "$_arg" = -h ] || [ "$_arg" = --help ]; then
    awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$1"
    exit 0
  fi
done
unset _arg
