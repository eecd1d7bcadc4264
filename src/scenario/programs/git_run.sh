# The measured work: git init, then COMMITS commits of one new 4 KiB file
# each, GAP_S seconds apart (6 lets ext4's 5 s journal commit fall between
# them), with core.fsync as FSYNC says (default: git's own, which syncs
# nothing) and core.fsyncMethod METHOD. No system or user configuration
# reaches git, and no template: no hook can run. A commit is marked
# durable once `git commit` returned, the point where a user takes it as
# saved.
set -eu
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=fslab GIT_AUTHOR_EMAIL=fslab@localhost GIT_AUTHOR_DATE='2026-01-01T00:00:00Z'
export GIT_COMMITTER_NAME=fslab GIT_COMMITTER_EMAIL=fslab@localhost GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'
git init -q --template= -b main repo
cd repo
if [ "$FSYNC" != default ]; then git config core.fsync "$FSYNC"; fi
git config core.fsyncMethod "$METHOD"
i=1
while [ "$i" -le "$COMMITS" ]; do
    yes "file $i" | head -c 4096 > "f$i"
    git add "f$i"
    git commit -q -m "commit $i"
    if [ -n "${FSLAB_CRASH_MARK:-}" ]; then git rev-parse HEAD > "$FSLAB_CRASH_MARK"; fi
    if [ "$i" -lt "$COMMITS" ] && [ "$GAP_S" != 0 ]; then sleep "$GAP_S"; fi
    i=$((i + 1))
done
