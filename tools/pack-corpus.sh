#!/usr/bin/env bash
# Packs a skills corpus folder (default ../shared/corpus) into test/fixtures/skills-corpus.tar.gz,
# the real-world skills the tests and benchmarks read (test/support/corpus.ts unpacks it once per
# run). The archive is reproducible: names sorted, no times, owners or modes of this machine.
#
#   tools/pack-corpus.sh [FOLDER]
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=${1:-../shared/corpus}
[ -f "$source_dir/README.md" ] || { echo "pack-corpus: $source_dir has no README.md; is it a corpus folder?" >&2; exit 1; }
tar --create --directory "$source_dir" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    --mode='u=rwX,go=rX' --format=ustar . \
  | gzip -9 -n > test/fixtures/skills-corpus.tar.gz
echo "pack-corpus: $(tar -tzf test/fixtures/skills-corpus.tar.gz | grep -c 'SKILL.md$') SKILL.md files, $(du -h test/fixtures/skills-corpus.tar.gz | cut -f1)"
