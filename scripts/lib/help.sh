# Sourced first by the scripts, before anything is installed or built. print_usage SCRIPT prints the comment at the
# top of SCRIPT (its usage), from its second line to its first line of code. With -h or --help among the arguments
# after SCRIPT, the usage is printed and the script exits 0; a script whose arguments are a command of the user's
# (scripts/simtorch) passes only its first.
# usage: source scripts/lib/help.sh "$0" "$@"
print_usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$1"; }
for _arg in "${@:2}"; do
  if [ "$_arg" = -h ] || [ "$_arg" = --help ]; then
    print_usage "$1"
    exit 0
  fi
done
unset _arg
