#!/bin/sh
# Turn a text file into a C string constant: embed.sh SYMBOL FILE > out.c
set -eu
sym=$1 file=$2
printf '/* generated from %s by scripts/embed.sh; do not edit */\n' "$file"
printf 'extern const char %s[];\nconst char %s[] =\n' "$sym" "$sym"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$/\\n"/' "$file"
printf ';\n'
