# Sourced by the suite scripts (integration.sh, monitoring.sh, deploy.sh), which pass their
# arguments on to node's test runner: --help prints the calling script's header comment; an
# argument other than node's --test-* flags is one error line and exit 2.
check_suite_args() {
  local arg
  for arg in "$@"; do
    case "$arg" in
      -h | --help)
        sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
        exit 0
        ;;
      --test-*) ;;
      *)
        echo "error: unknown argument '$arg': only node's --test-* flags are passed on (see $0 --help)" >&2
        exit 2
        ;;
    esac
  done
}
