# The stage: nothing to build; git must be here (the run makes the
# repository itself, since git init is part of what a crash can catch).
command -v git > /dev/null || { echo "git is not installed: apt-get install git" >&2; exit 1; }
