# A crash state as a developer meets it: bad when the repository git init
# began cannot be read, when `git fsck` finds it broken (an empty HEAD or
# object, a missing object), or when a commit marked durable is not on
# the branch. No repository at all is bad only once a commit was durable.
set -u
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
durable=$(wc -l < "$FSLAB_CRASH_DURABLE")
if [ ! -e repo ]; then
    [ "$durable" -eq 0 ] && exit 0
    echo "no repository, $durable commits marked durable"; exit 1
fi
cd repo || { echo "repo is not a folder"; exit 1; }
said=$(git rev-parse --git-dir 2>&1 > /dev/null) || { echo "git cannot read the repository: $(printf '%s\n' "$said" | head -n 1 | sed 's/ (or any parent.*//')"; exit 1; }
said=$(git fsck --no-progress --no-dangling 2>&1) || {
    echo "git fsck: $(printf '%s\n' "$said" | grep -c .) lines, first: $(printf '%s\n' "$said" | head -n 1)"; exit 1; }
while read -r commit; do
    git merge-base --is-ancestor "$commit" HEAD 2> /dev/null || {
        head=$(git rev-parse -q --verify HEAD || echo "no commit")
        echo "commit $(printf '%.7s' "$commit") marked durable is not on the branch (HEAD: $(printf '%.7s' "$head"))"; exit 1; }
done < "$FSLAB_CRASH_DURABLE"
