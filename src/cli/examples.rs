//! Texts shown at the end of `--help`: examples for the commands people
//! start with (a command line one can copy beats a paragraph about flags),
//! and the environment fslab reads.

/// `fslab --help`: the environment variables, with their defaults.
pub const ENVIRONMENT: &str = "\
Environment:
  FSLAB_STORE      the store when --store is not given: an SQLite
                   file or a postgres:// URL; unset or empty,
                   /var/lib/fslab/fslab.db as root, else
                   $XDG_DATA_HOME/fslab/fslab.db or
                   ~/.local/share/fslab/fslab.db
  FSLAB_STATE_DIR  where runs keep the ledgers of what they made,
                   for `fslab cleanup`; by default
                   /var/tmp/fslab/state as root, else
                   /var/tmp/fslab-UID/state";

/// `fslab run --help`.
pub const RUN: &str = "\
Examples:
  sudo fslab run replace-files mmap-fill --fs ext4,xfs,btrfs --repeat 3
  sudo fslab run --preset seeds --tag seeds     # each seed report's own comparison
  fslab run replace-files --dir /var/tmp        # no root: in a folder, on its file system
  sudo fslab run create-file --fs ext4 --set size=16M,64M --mount-opt ext4=sync";

/// `fslab exec --help`.
pub const EXEC: &str = "\
Examples:
  sudo fslab exec --fs ext4,xfs --cold-read -- sh -c 'dd if=/dev/zero of=f bs=1M count=64'
  sudo fslab exec --fs xfs --memory 256M -- fio --name=w --rw=write --bs=64k --size=64M
  fslab exec --dir /var/tmp -- cp -r /usr/share/doc copy   # no root: in a new folder there";

/// `fslab bisect --help`.
pub const BISECT: &str = "\
Examples:
  sudo fslab bisect --repo ~/src/tool --good v1.0 --build make --fs ext4 \\
      --figure journal_commits -- '{tree}/tool' write 40
  sudo fslab bisect --kernel debian:6.1.0-47..6.12.117 --fs ext4 --figure wall_s -- sh -c 'cp -r /usr/share/doc d'
  sudo fslab bisect --kernel old.vmlinuz,new.vmlinuz --scenario replace-files --verdict shows
Exit status 0 when the first bad point is found, 5 when it cannot be told (the ends do not
differ, a point stays undecided, or the change is not one step).";

/// `fslab compare --help`.
pub const COMPARE: &str = "\
Examples:
  fslab compare base sync                  # two tags: each one's runs, repeats pooled
  fslab compare base last --markdown       # the latest run against the tag base, for a PR
  fslab compare old.db new.db --all        # two stores, every figure listed
  fslab compare base last --gate extents,wall_s:10%   # only these fail it
  fslab compare base last --gate-file ci/fslab-gates  # the same, one gate a line
Exit status 1 when anything gated regressed, 5 when the repeats cannot decide a gated
figure that moved past its threshold for the worse (--allow-undecided: 0), so
`fslab compare base last || exit 1` gates CI.";

/// `fslab report --help`.
pub const REPORT: &str = "\
Examples:
  fslab report last -o report.html
  fslab report seeds --compare base -o seeds.html   # with the comparison against tag base";

#[cfg(test)]
mod tests {
    #[test]
    fn the_environment_block_reads_at_80_columns() {
        // It ends `fslab --help` and the man page, which man shows as it
        // is, indented by 7 columns: at 80 columns a line has 73.
        for line in super::ENVIRONMENT.lines() {
            assert!(line.chars().count() <= 73, "{} columns: {line}", line.chars().count());
        }
    }
}
