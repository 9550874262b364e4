#!/usr/bin/env bash
# The sources follow the repository's .clang-format: clang-format 14 (the
# version the style was measured with) would change nothing in any tracked
# .h .cpp .cu .cuh .hip file. Exit 0 when none would change, 1 when some
# would (they are listed), 2 when clang-format 14 or git is missing.
#
# Usage: tests/format/check_format.sh [REPOSITORY]    (fix: clang-format-14 -i FILE...)
set -uo pipefail
root="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
format="$(command -v clang-format-14 || true)"
[[ -n "$format" ]] || { echo "check_format: clang-format-14 not found (apt-get install clang-format-14)" >&2; exit 2; }
command -v git >/dev/null || { echo "check_format: git not found" >&2; exit 2; }
cd "$root" || exit 2
mapfile -t files < <(git ls-files '*.h' '*.cpp' '*.cu' '*.cuh' '*.hip')
[[ ${#files[@]} -gt 0 ]] || { echo "check_format: no tracked sources under $root" >&2; exit 2; }
changed=()
for file in "${files[@]}"; do
  "$format" --dry-run --Werror "$file" >/dev/null 2>&1 || changed+=("$file")
done
if [[ ${#changed[@]} -gt 0 ]]; then
  echo "check_format: clang-format-14 would change ${#changed[@]} file(s):"
  printf '  %s\n' "${changed[@]}"
  exit 1
fi
echo "check_format: ${#files[@]} files follow .clang-format"
